/**
 * How the client retries a lost session: quick attempts first, then a steady capped interval for as
 * long as it takes. The runtime keeps a dropped session for `KIOSK_GRACE_MS` (30 s by default) and a
 * shutting-down one answers upgrades with 503 `retry-after: 1`, so the quick attempts (exponential,
 * about 16–33 s in all) come while a resume can still find the session; after them the session is
 * likely gone and the runtime perhaps down or restarting, so the kiosk goes on trying every 7.5–15 s
 * and starts a new session when one answers. Jitter spreads kiosks that lost the same instance apart.
 */
export interface BackoffOptions {
  /** First delay's ceiling, in ms. */
  baseMs: number;
  /** No quick attempt waits longer than this, in ms. */
  maxDelayMs: number;
  /** How many attempts are quick (exponential from `baseMs` up to `maxDelayMs`); unset: all of them. */
  quickAttempts?: number;
  /** Every wait after the quick attempts has this ceiling, in ms: the interval a kiosk keeps trying at. */
  steadyDelayMs?: number;
  /** Attempts before giving up (`Infinity`: never). */
  maxAttempts: number;
  /** No attempt starts later than this after the loss, in ms (`Infinity`: no bound). */
  maxTotalMs: number;
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = {
  baseMs: 250,
  maxDelayMs: 5_000,
  quickAttempts: 10,
  steadyDelayMs: 15_000,
  maxAttempts: Infinity,
  maxTotalMs: Infinity,
};

/**
 * The wait before attempt `attempt` (1-based): "equal jitter", half of the ceiling plus a random
 * share of the other half, so delays grow for sure and kiosks that dropped together do not come back
 * together. The ceiling doubles from `baseMs` up to `maxDelayMs` over the quick attempts, then is
 * `steadyDelayMs`. `random` is in [0, 1).
 */
export function backoffDelayMs(attempt: number, o: BackoffOptions, random: () => number): number {
  const quick = attempt <= (o.quickAttempts ?? Infinity);
  const ceiling = quick ? Math.min(o.maxDelayMs, o.baseMs * 2 ** (attempt - 1)) : (o.steadyDelayMs ?? o.maxDelayMs);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** The reconnect options merged over the defaults, or a message saying which one is wrong. */
export function backoffOptions(given: Partial<BackoffOptions>): Required<BackoffOptions> | string {
  const o = { ...DEFAULT_BACKOFF, ...given };
  for (const key of ['baseMs', 'maxDelayMs', 'steadyDelayMs', 'maxTotalMs', 'maxAttempts'] as const) {
    if (!(o[key] > 0)) return `reconnect.${key} must be above 0 (Infinity for no bound), got ${o[key]}`;
  }
  if (!(o.quickAttempts >= 0)) return `reconnect.quickAttempts must be 0 or more, got ${o.quickAttempts}`;
  return o;
}

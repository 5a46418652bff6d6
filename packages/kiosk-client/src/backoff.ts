/**
 * How the client retries a lost session: exponential back-off with jitter, bounded both in attempts
 * and in total time. The runtime keeps a dropped session for `KIOSK_GRACE_MS` (30 s by default) and a
 * shutting-down one answers upgrades with 503 `retry-after: 1`, so the defaults try for about as long
 * as a resume can still find the session, and spread kiosks that lost the same instance apart.
 */
export interface BackoffOptions {
  /** First delay's ceiling, in ms. */
  baseMs: number;
  /** No delay is longer than this, in ms. */
  maxDelayMs: number;
  /** Attempts before giving up. */
  maxAttempts: number;
  /** No attempt starts later than this after the loss, in ms. */
  maxTotalMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, maxDelayMs: 5_000, maxAttempts: 10, maxTotalMs: 30_000 };

/**
 * The wait before attempt `attempt` (1-based): "equal jitter", half of the exponential ceiling plus a
 * random share of the other half, so delays grow for sure and kiosks that dropped together do not
 * come back together. `random` is in [0, 1).
 */
export function backoffDelayMs(attempt: number, o: BackoffOptions, random: () => number): number {
  const ceiling = Math.min(o.maxDelayMs, o.baseMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

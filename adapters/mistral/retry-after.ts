import { APICallError } from '@ai-sdk/provider';

/** The pause after a 429 that names no Retry-After: a 429 asks to slow down even when it does not say for how long. */
export const DEFAULT_THROTTLE_PAUSE_MS = 1_000;
/**
 * A longer Retry-After is capped. Past a minute, one call to see whether the limit has lifted costs
 * little, while a wrong header (an HTTP date read on a skewed clock, a quota reset hours away) would
 * otherwise silence the agent and stop the derivations for as long as it says. A minute is also the
 * longest wait the AI SDK's own retries take a Retry-After for.
 */
export const MAX_THROTTLE_PAUSE_MS = 60_000;

/** Response headers as node:http gives them, or as the AI SDK's APICallError keeps them (lowercased). */
type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

const header = (headers: ResponseHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * The wait a response asks for, in ms, capped at MAX_THROTTLE_PAUSE_MS: `retry-after-ms`
 * (milliseconds, OpenAI-style) or `Retry-After` (delay-seconds, or an HTTP date, RFC 9110 §10.2.3).
 * A date already past is no wait. Null when no such header is given or readable.
 */
export function retryAfterMs(headers: ResponseHeaders | undefined, now = Date.now()): number | null {
  if (!headers) return null;
  const cap = (ms: number) => Math.min(Math.max(0, ms), MAX_THROTTLE_PAUSE_MS);
  const precise = header(headers, 'retry-after-ms');
  if (precise !== undefined && precise.trim() !== '' && Number.isFinite(Number(precise)) && Number(precise) >= 0) return cap(Number(precise));
  const value = header(headers, 'retry-after')?.trim();
  // An HTTP date names its day and month: anything else that Date.parse would take (« -3 ») is not one.
  if (!value || (!/^\d+(\.\d+)?$/.test(value) && !/[a-z]/i.test(value))) return null;
  // Whole seconds by the RFC; a fraction is read as seconds too, never as a date.
  if (/^\d+(\.\d+)?$/.test(value)) return cap(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : cap(date - now);
}

/**
 * How long an answer asks every later call to wait, or null when it asks nothing: a 429 waits its
 * Retry-After (1 s when it names none), a 503 only when it names one — without, it is an overloaded
 * moment, tried again like any 5xx.
 */
export function throttleMs(status: number | undefined, headers: ResponseHeaders | undefined, now = Date.now()): number | null {
  if (status === 429) return retryAfterMs(headers, now) ?? DEFAULT_THROTTLE_PAUSE_MS;
  if (status === 503) return retryAfterMs(headers, now);
  return null;
}

/** `throttleMs` of an AI SDK call's error (its APICallError keeps the response's status and headers); null for any other error. */
export function throttleOfError(err: unknown, now = Date.now()): number | null {
  return APICallError.isInstance(err) ? throttleMs(err.statusCode, err.responseHeaders, now) : null;
}

/**
 * The pause one Mistral endpoint (a model, the embeddings) asked for: no call to it should leave before
 * it ends. One per endpoint and process, shared by every session: a rate limit is the key's, not a
 * senior's. A later, shorter Retry-After never shortens a pause already running.
 */
export class ProviderPause {
  private until = 0;

  /** ms left of the pause; 0 when calls may go out. */
  get leftMs(): number {
    return Math.max(0, this.until - Date.now());
  }

  /** Starts (or lengthens) the pause for `ms`, when an answer asked for one; returns `ms`. */
  note(ms: number | null): number | null {
    if (ms !== null) this.until = Math.max(this.until, Date.now() + ms);
    return ms;
  }

  /** Resolves when the pause is over (at once without one); an abort of `signal` rejects it with the signal's reason. */
  async over(signal?: AbortSignal): Promise<void> {
    for (let left = this.leftMs; left > 0; left = this.leftMs) await delay(left, signal);
  }
}

/** Resolves after `ms`; an abort of `signal` clears the timer and rejects with the signal's reason. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The check's waits: every one bounded, and every one ended at once by the whole run's signal (its
 * own bound), so no probe outlives the run.
 */

/** `promise`, or the signal's reason when it aborts first (the promise itself is left to settle). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A wait that ran past its bound. */
export class BoundError extends Error {
  override name = 'BoundError';
}

/** `promise` within `ms`: past it, a BoundError saying what did not come. */
export function within<T>(promise: PromiseLike<T>, ms: number, what: string, signal: AbortSignal): Promise<T> {
  return abortable(
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new BoundError(`${what} within ${ms} ms`)), ms);
      Promise.resolve(promise).then(resolve, reject).finally(() => clearTimeout(timer));
    }),
    signal,
  );
}

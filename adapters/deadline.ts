export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/** Settles with `work`, or rejects at `ms` or when `signal` aborts, whichever comes first. */
export function withDeadline<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(`over ${ms} ms`)), ms);
    const onAbort = () => reject(new DeadlineError('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
  });
}

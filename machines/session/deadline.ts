export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/**
 * Runs `work` under a budget: it settles with the work, or rejects at `ms` or when `signal`
 * aborts, whichever comes first — and then aborts the work's own signal, so the request
 * behind it (an embedding, a memory search) is cancelled rather than left open.
 */
export function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const stop = (reason: string) => {
      reject(new DeadlineError(reason));
      controller.abort(new DeadlineError(reason));
    };
    const timer = setTimeout(() => stop(`over ${ms} ms`), ms);
    const onAbort = () => stop('aborted');
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work(controller.signal)
      .then(resolve, reject)
      .finally(() => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      });
  });
}

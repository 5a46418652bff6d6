export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/**
 * Runs `work` under a budget: it settles with the work, or rejects at `ms` or when `signal`
 * aborts, whichever comes first — and then aborts the work's own signal, so the request
 * behind it (an embedding, a memory search, a transcript) is cancelled rather than left open.
 * The budget is judged once the input already received has been read: after the event loop
 * stalled (a busy machine), due timers run before the I/O waiting behind them, and work whose
 * answer has arrived would be given up for none.
 */
export function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  const controller = new AbortController();
  let settled = false;
  return new Promise<T>((resolve, reject) => {
    const stop = (reason: string) => {
      if (settled) return;
      reject(new DeadlineError(reason));
      controller.abort(new DeadlineError(reason));
    };
    const timer = setTimeout(() => setImmediate(() => stop(`over ${ms} ms`)), ms);
    const onAbort = () => stop('aborted');
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work(controller.signal)
      .then(resolve, reject)
      .finally(() => {
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      });
  });
}

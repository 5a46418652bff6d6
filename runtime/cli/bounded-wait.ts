import type WebSocket from 'ws';
import { DeadlineError, withDeadline } from '../../machines/session/deadline.ts';

/**
 * A kiosk CLI's wait on the runtime (the socket opening, `session.ready`): `step`, or — once `ms`
 * pass without it — the socket dropped and the error `timedOut` makes. A host that takes the
 * connection and never answers must not hold the terminal forever.
 */
export async function boundedWait<T>(socket: WebSocket, step: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  try {
    return await withDeadline(() => step, ms, new AbortController().signal);
  } catch (err) {
    if (!(err instanceof DeadlineError)) throw err;
    socket.terminate();
    throw timedOut();
  }
}


import type { Logger } from 'pino';
import type { PgSignals, ProcessSignal } from '../../adapters/postgres/pg-signals.ts';

/** Releases heard before their claim's answer came back (the commit raced the other process's answer): enough for a flood of starts. */
const EARLY_RELEASES = 1_024;

/** What the takeover needs of the registry: close the named session of the senior as `replaced`, at once. */
export interface TakenOver {
  closeReplaced(seniorId: string, sessionId: string): void;
}

/**
 * A takeover of a senior's session living in another process, over LISTEN/NOTIFY (`PgSignals`).
 *
 * The ordering, which makes "the old session answers nothing once the new one does" true: the new
 * process's claim commits with a `takeover` notice to the old one; the old process closes its
 * session as `replaced` as soon as it hears it (its kiosk gets `session.closed` and nothing after:
 * the session's link is dropped in the same tick) and answers `released`; the new process sends
 * `session.ready` only after that answer, or after `ackMs` at most (the old process died, or its
 * listener is down: its next presence heartbeat closes its session then, the fallback).
 */
export class Takeovers {
  private readonly waiters = new Map<string, () => void>();
  private readonly early = new Set<string>();

  private readonly signals: Pick<PgSignals, 'on' | 'send' | 'ready'>;
  private readonly processId: string;
  private readonly ackMs: number;
  private readonly logger: Pick<Logger, 'warn'>;

  constructor(
    signals: Pick<PgSignals, 'on' | 'send' | 'ready'>,
    processId: string,
    ackMs: number,
    logger: Pick<Logger, 'warn'>,
  ) {
    this.signals = signals;
    this.processId = processId;
    this.ackMs = ackMs;
    this.logger = logger;
  }

  /** Answers the takeovers other processes make of this one's sessions. */
  serve(registry: TakenOver): () => void {
    return this.signals.on((signal) => this.heard(signal, registry));
  }

  /**
   * Waits until the process that held `sessionId` says it is closed, at most `ackMs`; true if it did.
   * Without a listener of its own this process cannot hear the answer: it waits the bound.
   */
  released(sessionId: string): Promise<boolean> {
    if (this.early.delete(sessionId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(sessionId);
        this.logger.warn({ sessionId, listening: this.signals.ready }, 'takeover: the other process did not release the session in time; its heartbeat closes it');
        resolve(false);
      }, this.ackMs);
      this.waiters.set(sessionId, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private heard(signal: ProcessSignal, registry: TakenOver): void {
    if (signal.kind === 'released') {
      const waiter = this.waiters.get(signal.session);
      if (waiter) {
        this.waiters.delete(signal.session);
        waiter();
        return;
      }
      if (this.early.size >= EARLY_RELEASES) this.early.delete(this.early.values().next().value!);
      this.early.add(signal.session);
      return;
    }
    if (signal.kind !== 'takeover') return;
    // Closed first, answered after: once the answer leaves, the old session cannot send a frame.
    registry.closeReplaced(signal.senior, signal.session);
    this.signals.send({ kind: 'released', to: signal.by, session: signal.session }).catch((err: unknown) => {
      this.logger.warn({ err, sessionId: signal.session }, 'takeover: could not answer the other process; it goes on after its bound');
    });
  }
}

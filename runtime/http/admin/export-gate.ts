export interface ExportGateSettings {
  /** Exports written at once (EXPORT_CONCURRENCY). */
  concurrency: number;
  /** Exports waiting for a turn (EXPORT_QUEUE); past it a request is refused at once. */
  queue: number;
  /** The longest an export waits for its turn (EXPORT_QUEUE_WAIT_MS). */
  waitMs: number;
}

/** Why an export did not get its turn: the queue was full, its wait ran out, or its client left. */
export type Refusal = 'full' | 'timeout' | 'gone';

interface Waiter {
  admit(): void;
}

/**
 * Bounds the exports running at once, and those waiting: each reads the database batch after batch
 * and competes with every kiosk's turn for it (one session on embedded PGlite), so their number is
 * what keeps the others' turns within their budget.
 */
export class ExportGate {
  private readonly settings: ExportGateSettings;
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(settings: ExportGateSettings) {
    this.settings = settings;
  }

  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** A release to call once the export is over, or why there is none. `signal`: the client left; `onWait`: told when it queues. */
  async enter(signal: AbortSignal, onWait?: () => void): Promise<(() => void) | Refusal> {
    if (signal.aborted) return 'gone';
    if (this.running < this.settings.concurrency) return this.admitted();
    if (this.waiting.length >= this.settings.queue) return 'full';
    return new Promise((resolve) => {
      const leave = (why: Refusal) => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        clearTimeout(timer);
        signal.removeEventListener('abort', gone);
        resolve(why);
      };
      const gone = () => leave('gone');
      const timer = setTimeout(() => leave('timeout'), this.settings.waitMs);
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', gone);
          resolve(this.admitted());
        },
      };
      signal.addEventListener('abort', gone, { once: true });
      this.waiting.push(waiter);
      onWait?.();
    });
  }

  private admitted(): () => void {
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.waiting.shift()?.admit();
    };
  }
}

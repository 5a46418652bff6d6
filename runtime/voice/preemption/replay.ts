/**
 * A stream recorded as it arrives and read from its start by whoever comes: the speculative turn reads
 * it first, the committed turn adopts it later and gets every item already received, then the rest as it
 * comes. Reading never stops the source: only the owner's abort does. Bounded: past `maxItems` the
 * replay fails (a reader then falls back to asking for itself).
 */
export class Replay<T> {
  private readonly items: T[] = [];
  private ended = false;
  private failure: { err: unknown } | null = null;
  private changed: Promise<void>;
  private notify!: () => void;

  private readonly maxItems: number;

  constructor(
    source: AsyncIterable<T>,
    maxItems: number,
  ) {
    this.maxItems = maxItems;
    this.changed = this.nextChange();
    void this.pump(source);
  }

  /** From the first item; stops when `signal` aborts, throws what the source threw. */
  async *read(signal: AbortSignal): AsyncGenerator<T> {
    let next = 0;
    // One listener per read, not one per wait.
    const stop = aborted(signal);
    for (;;) {
      while (next < this.items.length) {
        if (signal.aborted) return;
        yield this.items[next++]!;
      }
      if (this.failure) throw this.failure.err;
      if (this.ended || signal.aborted) return;
      await Promise.race([this.changed, stop]);
    }
  }

  private async pump(source: AsyncIterable<T>): Promise<void> {
    try {
      for await (const item of source) {
        if (this.items.length >= this.maxItems) throw new RangeError(`replay: more than ${this.maxItems} items`);
        this.items.push(item);
        this.wake();
      }
      this.ended = true;
    } catch (err) {
      this.failure = { err };
    }
    this.wake();
  }

  private wake(): void {
    const notify = this.notify;
    this.changed = this.nextChange();
    notify();
  }

  private nextChange(): Promise<void> {
    return new Promise<void>((resolve) => (this.notify = resolve));
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

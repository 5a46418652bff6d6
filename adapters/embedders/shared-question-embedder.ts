import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';

export interface SharedQuestionEmbedderOptions {
  /**
   * Callers one request serves: the turn's own (recall, and the semantic cache when it is on).
   * Then it is forgotten, so the next turn asking the same text gets a request of its own.
   */
  maxUses: number;
  /** Texts held at once (in flight or recent); the oldest goes first. */
  maxEntries: number;
  /** A vector is reused this long after its request started, then forgotten. */
  ttlMs: number;
  /** A warm-up (`warm`) gives up after this long if nobody joined it. */
  warmTimeoutMs: number;
  /** Warm-ups in flight at once; more are dropped (a warm-up is only ever a head start). */
  maxWarming: number;
  now?: () => number;
}

interface Entry {
  text: string;
  startedAt: number;
  vector: Promise<readonly number[]>;
  settled: boolean;
  /** Callers waiting on the request; when the last one gives up before it settles, it is aborted. */
  waiters: number;
  /** Callers served (a warm-up is not one). */
  uses: number;
  controller: AbortController;
}

/**
 * One embedding per question and turn. Recall and the semantic cache both embed the turn's
 * transcript, and the voice path may have started it from an interim transcript (`warm`): the
 * first caller starts the request (or finds the warm-up's), the turn's second joins it, and the
 * entry is then forgotten (`maxUses`).
 *
 * Keyed by the exact text (no normalisation, so two different texts never share a vector) and
 * per instance, i.e. per embedding model. In RAM only, bounded in count and in time, never logged.
 * A request that fails or is aborted is forgotten at once; the vectors handed out are frozen, so
 * no caller can alter what another receives. Batches (fact extraction, re-embedding) pass through.
 */
export class SharedQuestionEmbedder implements MemoryEmbedderPort {
  readonly modelId: string;
  /** By text; insertion order is start order, so the oldest entry is always first. */
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private warming = 0;
  private pruneTimer: NodeJS.Timeout | null = null;

  private readonly inner: MemoryEmbedderPort;
  private readonly options: SharedQuestionEmbedderOptions;

  constructor(
    inner: MemoryEmbedderPort,
    options: SharedQuestionEmbedderOptions,
  ) {
    this.inner = inner;
    this.options = options;
    this.modelId = inner.modelId;
    this.now = options.now ?? Date.now;
  }

  /** Texts held (in flight or recent), for tests and metrics. */
  get size(): number {
    return this.entries.size;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length !== 1) return this.inner.embed(texts, signal);
    signal?.throwIfAborted();
    const entry = this.entry(texts[0]!);
    entry.uses += 1;
    if (entry.uses >= this.options.maxUses) this.forget(entry);
    // Frozen: a caller that tries to write into it throws instead of corrupting another's vector.
    return [(await this.join(entry, signal)) as number[]];
  }

  /**
   * Starts embedding `text` so that a caller asking for it soon finds it ready or in flight.
   * Fire and forget: errors are swallowed, the request is bounded by `warmTimeoutMs`, and at most
   * `maxWarming` run at once.
   */
  warm(text: string): void {
    const held = this.entries.get(text);
    if ((held && !this.expired(held)) || this.warming >= this.options.maxWarming) return;
    this.warming += 1;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`warm-up over ${this.options.warmTimeoutMs} ms`)), this.options.warmTimeoutMs);
    this.join(this.entry(text), deadline.signal)
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer);
        this.warming -= 1;
      });
  }

  private expired(entry: Entry): boolean {
    return this.now() - entry.startedAt > this.options.ttlMs;
  }

  /** The text's live entry, or a new request. */
  private entry(text: string): Entry {
    this.prune();
    const held = this.entries.get(text);
    if (held && !this.expired(held)) return held;
    if (held) this.forget(held);
    const controller = new AbortController();
    const entry: Entry = { text, startedAt: this.now(), vector: null!, settled: false, waiters: 0, uses: 0, controller };
    entry.vector = this.inner.embed([text], controller.signal).then(
      (vectors) => {
        const vector = vectors[0];
        if (!vector) throw new Error(`embedding model ${this.modelId} returned no vector`);
        entry.settled = true;
        return Object.freeze(vector);
      },
      (err: unknown) => {
        entry.settled = true;
        this.forget(entry);
        throw err;
      },
    );
    // A rejection nobody waits for any more (every caller left) is not an unhandled one.
    entry.vector.catch(() => {});
    while (this.entries.size >= this.options.maxEntries) this.forget(this.entries.values().next().value!);
    this.entries.set(text, entry);
    this.schedulePrune();
    return entry;
  }

  /** Waits for the entry's vector until `signal` aborts; the last waiter to leave early aborts the request. */
  private join(entry: Entry, signal?: AbortSignal): Promise<readonly number[]> {
    entry.waiters += 1;
    return new Promise((resolve, reject) => {
      let left = false;
      const leave = () => {
        if (left) return false;
        left = true;
        entry.waiters -= 1;
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = () => {
        if (!leave()) return;
        if (entry.waiters === 0 && !entry.settled) {
          this.forget(entry);
          entry.controller.abort(signal!.reason);
        }
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      entry.vector.then(
        (vector) => {
          if (leave()) resolve(vector);
        },
        (err: unknown) => {
          if (leave()) reject(err);
        },
      );
    });
  }

  private forget(entry: Entry): void {
    if (this.entries.get(entry.text) === entry) this.entries.delete(entry.text);
  }

  /** Drops expired entries (the oldest come first), so no text stays in RAM past its time. */
  private prune(): void {
    for (const entry of this.entries.values()) {
      if (!this.expired(entry)) break;
      this.forget(entry);
    }
  }

  private schedulePrune(): void {
    if (this.pruneTimer) return;
    const oldest = this.entries.values().next().value;
    if (!oldest) return;
    const due = Math.max(0, oldest.startedAt + this.options.ttlMs - this.now()) + 1;
    this.pruneTimer = setTimeout(() => {
      this.pruneTimer = null;
      this.prune();
      this.schedulePrune();
    }, due);
    this.pruneTimer.unref();
  }
}

import { Worker } from 'node:worker_threads';

/**
 * An offline synthesizer compiled to WASM, run in one worker thread per process: synthesis is
 * synchronous inside the WASM module, so the event loop keeps serving every session's microphone
 * frames meanwhile. Sentences are synthesized one at a time, in order. Shared by espeak-ng and
 * SVOX Pico, whose workers speak the same messages (WorkerMessage).
 */
export interface SpeechWorkerSpec {
  /** How errors and logs name the engine: 'espeak-ng', 'SVOX Pico'. */
  label: string;
  /** The rate the worker must report when loaded; any other is a failure to load. */
  sampleRate: number;
  /** The worker's plain-JavaScript source, evaluated (no loader or build step needed for it). */
  source: string;
  /** Its workerData, computed at each spawn. */
  workerData: () => unknown;
  /** The engine's own error class, for every failure it reports. */
  error: (message: string) => Error;
  /** …and for a worker that fails before it is loaded, when the engine tells those apart (a caller may then use another voice). */
  loadError?: (message: string) => Error;
}

/**
 * No word from the worker for this long while it holds a sentence means it is stuck: healthy
 * synthesis posts audio every few tens of ms (at most ~200 ms apart measured with espeak-ng on a
 * 900-word text; SVOX Pico posts ~64 ms chunks). The same bound as Mistral's speech stall; only an
 * event loop blocked this long could trip it falsely.
 */
export const SPEECH_WORKER_STUCK_MS = 3_000;
/** Loading the WASM module takes 300–500 ms (Pico's French lingware, 1.4 MB, included); beyond this the worker is not coming. */
const START_MS = 15_000;

/**
 * One sentence of `request` on `engine`: its PCM chunks, in order. Ends quietly when `signal`
 * aborts; throws the engine's error when it fails or when `timeoutMs` (queueing included) passes.
 */
export async function* speakOn(engine: () => SpeechWorkerEngine, request: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): AsyncIterable<Int16Array> {
  if (signal.aborted || typeof request.text !== 'string' || request.text.trim() === '') return;
  const worker = engine();
  const job = worker.enqueue(request);
  const timer = setTimeout(() => job.fail(worker.spec.error(`no speech within ${timeoutMs} ms`)), timeoutMs);
  const onAbort = () => job.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const chunk = await job.next();
      if (chunk === null) return;
      yield chunk;
    }
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    job.cancel();
  }
}

/** The process's engine for `spec`: made on first use, made again on the next use after it died. */
export function sharedEngine(spec: SpeechWorkerSpec): () => SpeechWorkerEngine {
  let shared: SpeechWorkerEngine | undefined;
  return () => {
    if (!shared || shared.dead) shared = new SpeechWorkerEngine(spec);
    return shared;
  };
}

/** One sentence: chunks arrive from the worker, the speaker pulls them; `null` ends it. */
class Job {
  private readonly chunks: Int16Array[] = [];
  private ended = false;
  private error: Error | undefined;
  private waiter: (() => void) | undefined;
  cancelled = false;

  readonly id: number;
  readonly request: Record<string, unknown>;

  constructor(id: number, request: Record<string, unknown>) {
    this.id = id;
    this.request = request;
  }

  push(chunk: Int16Array): void {
    this.chunks.push(chunk);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(error: Error): void {
    this.error ??= error;
    this.wake();
  }

  cancel(): void {
    this.cancelled = true;
    this.end();
  }

  async next(): Promise<Int16Array | null> {
    for (;;) {
      if (this.cancelled) return null;
      if (this.error) throw this.error;
      const chunk = this.chunks.shift();
      if (chunk) return chunk;
      if (this.ended) return null;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

type WorkerMessage =
  | { ready: true; sampleRate: number }
  | { failed: string }
  | { id: number; pcm: Int16Array }
  | { id: number; done: true }
  | { id: number; error: string };

/**
 * The engine's worker: spawned at construction, replaced at once when it is stuck on a sentence
 * (the sentences queued behind it go to the new one); dead when it fails to load or exits.
 */
export class SpeechWorkerEngine {
  readonly spec: SpeechWorkerSpec;
  private worker: Worker;
  private readonly queue: Job[] = [];
  private current: Job | undefined;
  private ready = false;
  private nextId = 1;
  /** Bounds the worker's loading, then each of its silences while it holds a sentence. */
  private watchdog: NodeJS.Timeout | undefined;
  dead = false;

  constructor(spec: SpeechWorkerSpec) {
    this.spec = spec;
    this.worker = this.spawn();
  }

  enqueue(request: Record<string, unknown>): Job {
    const job = new Job(this.nextId++, request);
    if (this.dead) job.fail(this.spec.error(`${this.spec.label} worker is gone`));
    else {
      this.queue.push(job);
      this.pump();
    }
    return job;
  }

  private spawn(): Worker {
    const { label } = this.spec;
    const worker = new Worker(this.spec.source, { eval: true, workerData: this.spec.workerData() });
    worker.unref();
    // A replaced worker's last words, its exit above all, are no longer this engine's business.
    worker.on('message', (message: WorkerMessage) => worker === this.worker && this.receive(message));
    worker.on('error', (err) => worker === this.worker && this.die(`${label} worker failed: ${err.message}`));
    worker.on('exit', () => worker === this.worker && this.die(`${label} worker exited`));
    this.watch(START_MS, () => this.die(`${label} did not load within ${START_MS} ms`));
    return worker;
  }

  private receive(message: WorkerMessage): void {
    const { label, sampleRate } = this.spec;
    if ('ready' in message) {
      if (message.sampleRate !== sampleRate) return this.die(`${label} speaks at ${message.sampleRate} Hz, not ${sampleRate}`);
      clearTimeout(this.watchdog);
      this.ready = true;
      return this.pump();
    }
    if ('failed' in message) return this.die(`${label} did not load: ${message.failed}`);
    const job = this.current;
    if (!job || job.id !== message.id) return;
    if ('pcm' in message) {
      this.watch(SPEECH_WORKER_STUCK_MS, () => this.replace());
      return job.push(message.pcm);
    }
    clearTimeout(this.watchdog);
    if ('error' in message) job.fail(this.spec.error(message.error));
    else job.end();
    this.current = undefined;
    this.pump();
  }

  /** One sentence at a time; sentences cancelled while queued are never synthesized. */
  private pump(): void {
    if (!this.ready || this.current || this.dead) return;
    let job = this.queue.shift();
    while (job?.cancelled) job = this.queue.shift();
    if (!job) return void this.worker.unref();
    this.current = job;
    // Held while a sentence is on its way, so a short-lived process waits for its speech.
    this.worker.ref();
    this.worker.postMessage({ id: job.id, ...job.request });
    this.watch(SPEECH_WORKER_STUCK_MS, () => this.replace());
  }

  /**
   * The worker holds a sentence and says nothing: that sentence fails, a new worker takes the queue.
   * Terminating it is safe: it runs WASM only, which V8 can stop anywhere (no native addon, unlike
   * Silero's onnxruntime, whose worker is never terminated); checked by terminating it mid-synthesis.
   */
  private replace(): void {
    const stuck = this.worker;
    this.current?.fail(this.spec.error(`${this.spec.label} worker stuck: no audio for ${SPEECH_WORKER_STUCK_MS} ms`));
    this.current = undefined;
    this.ready = false;
    this.worker = this.spawn();
    void stuck.terminate();
  }

  /** Before its worker said it was loaded, a failure is the spec's load error (when it has one). */
  private die(message: string): void {
    if (this.dead) return;
    const error = (this.ready ? this.spec.error : (this.spec.loadError ?? this.spec.error))(message);
    this.dead = true;
    clearTimeout(this.watchdog);
    for (const job of [this.current, ...this.queue]) job?.fail(error);
    this.queue.length = 0;
    this.current = undefined;
    void this.worker.terminate();
  }

  private watch(ms: number, fire: () => void): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(fire, ms);
    // The worker, ref'd while it holds a sentence, is what keeps a process alive for its speech.
    this.watchdog.unref();
  }
}

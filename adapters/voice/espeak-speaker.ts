import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';

/** espeak-ng's native output rate. */
export const ESPEAK_SAMPLE_RATE = 22_050;
export const ESPEAK_FRENCH_VOICE = 'roa/fr';

export class EspeakError extends Error {
  override name = 'EspeakError';
}

export interface EspeakSpeakerOptions {
  /** An espeak-ng French voice: 'roa/fr' (France), 'roa/fr-BE', 'roa/fr-CH'. */
  voice?: string;
  /** Speaking rate in words a minute; espeak's default (175) is brisk for a senior. Default 150. */
  wordsPerMinute?: number;
  /** Bound on one sentence, queueing included. Default 10,000 ms. */
  timeoutMs?: number;
}

/**
 * Offline SpeakerPort: espeak-ng compiled to WASM (@echogarden/espeak-ng-emscripten), French voice,
 * no system package. Synthesis is synchronous inside the WASM module (~50–110 ms a sentence), so it
 * runs in one worker thread per process, loaded on first use: the event loop keeps serving every
 * session's microphone frames meanwhile. Sentences are synthesized one at a time, in order.
 */
export class EspeakSpeaker implements SpeakerPort {
  readonly sampleRate = ESPEAK_SAMPLE_RATE;
  readonly voiceId: string;
  private readonly voice: string;
  private readonly wordsPerMinute: number;
  private readonly timeoutMs: number;

  constructor(options: EspeakSpeakerOptions = {}) {
    this.voice = options.voice ?? ESPEAK_FRENCH_VOICE;
    this.wordsPerMinute = options.wordsPerMinute ?? 150;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.voiceId = `espeak-ng:${this.voice}:${this.wordsPerMinute}`;
  }

  /** Ends quietly when `signal` aborts; throws EspeakError when the engine fails or the bound passes. */
  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    if (signal.aborted || text.trim() === '') return;
    const job = engine().enqueue({ text, voice: this.voice, wordsPerMinute: this.wordsPerMinute });
    const timer = setTimeout(() => job.fail(new EspeakError(`no speech within ${this.timeoutMs} ms`)), this.timeoutMs);
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
}

interface JobRequest {
  text: string;
  voice: string;
  wordsPerMinute: number;
}

/** One sentence: chunks arrive from the worker, the speaker pulls them; `null` ends it. */
class Job {
  private readonly chunks: Int16Array[] = [];
  private ended = false;
  private error: Error | undefined;
  private waiter: (() => void) | undefined;
  cancelled = false;

  readonly id: number;
  readonly request: JobRequest;

  constructor(
    id: number,
    request: JobRequest,
  ) {
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

// The worker's source: plain JavaScript, evaluated, so no loader or build step is needed for it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { default: load } = await import(workerData.moduleUrl);
  const wasm = await load();
  const espeak = new wasm.eSpeakNGWorker();
  let voice = null;
  let rate = null;
  parentPort.on('message', ({ id, text, voice: wanted, wordsPerMinute }) => {
    try {
      if (wanted !== voice) { if (espeak.set_voice(wanted) !== 0) throw new Error('unknown espeak-ng voice ' + wanted); voice = wanted; }
      if (wordsPerMinute !== rate) { espeak.set_rate(wordsPerMinute); rate = wordsPerMinute; }
      espeak.synthesize(text, (samples) => {
        if (samples && samples.length > 0) parentPort.postMessage({ id, pcm: samples }, [samples.buffer]);
        return 0;
      });
      parentPort.postMessage({ id, done: true });
    } catch (err) {
      parentPort.postMessage({ id, error: String(err && err.message || err) });
    }
  });
  parentPort.postMessage({ ready: true, sampleRate: espeak.get_samplerate() });
})().catch((err) => parentPort.postMessage({ failed: String(err && err.message || err) }));
`;

type WorkerMessage =
  | { ready: true; sampleRate: number }
  | { failed: string }
  | { id: number; pcm: Int16Array }
  | { id: number; done: true }
  | { id: number; error: string };

/**
 * No word from the worker for this long while it holds a sentence means it is stuck: healthy
 * synthesis posts audio every few tens of ms (at most ~200 ms apart measured, on a 900-word text).
 * The same bound as Mistral's speech stall; only an event loop blocked this long could trip it falsely.
 */
export const ESPEAK_STUCK_MS = 3_000;
/** Loading the WASM module takes 300–500 ms; beyond this the worker is not coming. */
const START_MS = 15_000;

/**
 * The process's espeak-ng worker: spawned on first use, respawned on the next use after a crash,
 * replaced at once when it is stuck on a sentence (the sentences queued behind it go to the new one).
 */
class EspeakEngine {
  private worker: Worker;
  private readonly queue: Job[] = [];
  private current: Job | undefined;
  private ready = false;
  private nextId = 1;
  /** Bounds the worker's loading, then each of its silences while it holds a sentence. */
  private watchdog: NodeJS.Timeout | undefined;
  dead = false;

  constructor() {
    this.worker = this.spawn();
  }

  enqueue(request: JobRequest): Job {
    const job = new Job(this.nextId++, request);
    if (this.dead) job.fail(new EspeakError('espeak-ng worker is gone'));
    else {
      this.queue.push(job);
      this.pump();
    }
    return job;
  }

  private spawn(): Worker {
    const moduleUrl = pathToFileURL(createRequire(import.meta.url).resolve('@echogarden/espeak-ng-emscripten')).href;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { moduleUrl } });
    worker.unref();
    // A replaced worker's last words, its exit above all, are no longer this engine's business.
    worker.on('message', (message: WorkerMessage) => worker === this.worker && this.receive(message));
    worker.on('error', (err) => worker === this.worker && this.die(new EspeakError(`espeak-ng worker failed: ${err.message}`)));
    worker.on('exit', () => worker === this.worker && this.die(new EspeakError('espeak-ng worker exited')));
    this.watch(START_MS, () => this.die(new EspeakError(`espeak-ng did not load within ${START_MS} ms`)));
    return worker;
  }

  private receive(message: WorkerMessage): void {
    if ('ready' in message) {
      if (message.sampleRate !== ESPEAK_SAMPLE_RATE) return this.die(new EspeakError(`espeak-ng speaks at ${message.sampleRate} Hz, not ${ESPEAK_SAMPLE_RATE}`));
      clearTimeout(this.watchdog);
      this.ready = true;
      return this.pump();
    }
    if ('failed' in message) return this.die(new EspeakError(`espeak-ng did not load: ${message.failed}`));
    const job = this.current;
    if (!job || job.id !== message.id) return;
    if ('pcm' in message) {
      this.watch(ESPEAK_STUCK_MS, () => this.replace());
      return job.push(message.pcm);
    }
    clearTimeout(this.watchdog);
    if ('error' in message) job.fail(new EspeakError(message.error));
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
    this.watch(ESPEAK_STUCK_MS, () => this.replace());
  }

  /**
   * The worker holds a sentence and says nothing: that sentence fails, a new worker takes the queue.
   * Terminating it is safe: it runs WASM only, which V8 can stop anywhere (no native addon, unlike
   * Silero's onnxruntime, whose worker is never terminated); checked by terminating it mid-synthesis.
   */
  private replace(): void {
    const stuck = this.worker;
    this.current?.fail(new EspeakError(`espeak-ng worker stuck: no audio for ${ESPEAK_STUCK_MS} ms`));
    this.current = undefined;
    this.ready = false;
    this.worker = this.spawn();
    void stuck.terminate();
  }

  private die(error: Error): void {
    if (this.dead) return;
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

let shared: EspeakEngine | undefined;

function engine(): EspeakEngine {
  if (!shared || shared.dead) shared = new EspeakEngine();
  return shared;
}

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import { readPicoLingware, type PicoLingware } from './pico-lingware.ts';
import { sharedEngine, speakOn, type SpeechWorkerEngine } from './speech-worker.ts';

/** SVOX Pico's only output rate. */
export const PICO_SAMPLE_RATE = 16_000;

export class PicoError extends Error {
  override name = 'PicoError';
}

/** Pico did not load: its lingware unreadable or corrupt, the WASM module refused (OFFLINE_VOICE=auto then speaks with espeak-ng). */
export class PicoLoadError extends PicoError {
  override name = 'PicoLoadError';
}

export interface PicoSpeakerOptions {
  /** The French lingware (Debian's libttspico-data): findPicoLingware. */
  lingware: PicoLingware;
  /** Pico's `<speed level>`, in percent of its own pace, which is brisk for a senior (as espeak-ng's). Default 90. */
  speedPercent?: number;
  /** Bound on one sentence, queueing included. Default 10,000 ms. */
  timeoutMs?: number;
}

/**
 * Offline SpeakerPort: SVOX Pico compiled to WASM (@echogarden/svoxpico-wasm) with Debian's French
 * lingware, a clearer voice than espeak-ng's. The npm package holds the engine only; the lingware
 * (non-free in Debian, labelled Apache-2.0) is read from where libttspico-data installs it. Synthesis
 * runs in the process's speech worker (speech-worker.ts), loaded on first use.
 */
export class PicoSpeaker implements SpeakerPort {
  readonly sampleRate = PICO_SAMPLE_RATE;
  readonly voiceId: string;
  private readonly speedPercent: number;
  private readonly timeoutMs: number;
  private readonly engine: () => SpeechWorkerEngine;

  constructor(options: PicoSpeakerOptions) {
    this.speedPercent = options.speedPercent ?? 90;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.voiceId = `svox-pico:fr-FR:${this.speedPercent}`;
    this.engine = engineFor(options.lingware);
  }

  /** Ends quietly when `signal` aborts; throws PicoError when the engine fails or the bound passes. */
  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    // Pico reads markup in its text: a reply's own angle brackets must not become a command.
    const markup = `<speed level="${this.speedPercent}">${text.replace(/[<>]/g, ' ')}</speed>`;
    return speakOn(this.engine, { text: text.trim() === '' ? '' : markup }, signal, this.timeoutMs);
  }
}

/** Samples a chunk carries to the session: 64 ms (Pico itself hands out 2 ms frames). */
const CHUNK_SAMPLES = 1_024;
/**
 * A frame whose peak stays below this (−42 dBFS) is silence: Pico's pauses carry a faint noise that
 * differs from one rendering to the next, with bumps up to ~160 after a sentence's last word.
 */
const QUIET_PEAK = 256;
/** Pico ends a sentence with 0.6–1 s of silence; this much of it is kept, the pause between sentences. */
const TAIL_SAMPLES = 2_400;

// The worker's source: plain JavaScript, evaluated, so no loader or build step is needed for it.
// Pico's C API (picoapi.h): status 0 is OK, 200 idle (sentence done), 201 busy; sizes are 16-bit.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { default: load } = await import(workerData.moduleUrl);
  const m = await load();
  const { chunkSamples, quietPeak, tailSamples } = workerData;
  const MEMORY = 2500000, OK = 0, IDLE = 200, BUSY = 201, MAX_PUT = 32767, OUT_BYTES = 512;
  const check = (status, call) => { if (status !== OK) throw new Error(call + ' failed with status ' + status); };
  const cString = (text) => { const bytes = Buffer.from(text + '\\0', 'utf8'); const at = m._malloc(bytes.length); m.HEAPU8.set(bytes, at); return { at, length: bytes.length }; };
  const pointer = m._malloc(4);
  check(m._pico_initialize(m._malloc(MEMORY), MEMORY, pointer), 'pico_initialize');
  const system = m.HEAPU32[pointer >> 2];
  const voice = cString('kohami-fr');
  check(m._pico_createVoiceDefinition(system, voice.at), 'pico_createVoiceDefinition');
  for (const { name, bytes } of workerData.files) {
    // An in-memory, read-only file of the WASM module: nothing is written to disk.
    m.FS.createDataFile('/', name, bytes, true, false);
    check(m._pico_loadResource(system, cString('/' + name).at, pointer), 'pico_loadResource ' + name);
    const resourceName = m._malloc(32);
    check(m._pico_getResourceName(system, m.HEAPU32[pointer >> 2], resourceName), 'pico_getResourceName');
    check(m._pico_addResourceToVoiceDefinition(system, voice.at, resourceName), 'pico_addResourceToVoiceDefinition');
  }
  check(m._pico_newEngine(system, voice.at, pointer), 'pico_newEngine');
  const engine = m.HEAPU32[pointer >> 2];
  const put = m._malloc(2), out = m._malloc(OUT_BYTES), received = m._malloc(2), type = m._malloc(2);

  function speak(id, text) {
    let chunk = new Int16Array(chunkSamples), filled = 0;
    const quiet = [];
    const send = (frame) => {
      for (let i = 0; i < frame.length; ) {
        const n = Math.min(frame.length - i, chunkSamples - filled);
        chunk.set(frame.subarray(i, i + n), filled);
        filled += n; i += n;
        if (filled === chunkSamples) { parentPort.postMessage({ id, pcm: chunk }, [chunk.buffer]); chunk = new Int16Array(chunkSamples); filled = 0; }
      }
    };
    const input = cString(text);
    try {
      for (let offset = 0; offset < input.length; ) {
        check(m._pico_putTextUtf8(engine, input.at + offset, Math.min(MAX_PUT, input.length - offset), put), 'pico_putTextUtf8');
        offset += m.HEAP16[put >> 1];
        for (;;) {
          const status = m._pico_getData(engine, out, OUT_BYTES, received, type);
          if (status !== IDLE && status !== BUSY) throw new Error('pico_getData failed with status ' + status);
          const frame = m.HEAP16.slice(out >> 1, (out >> 1) + (m.HEAP16[received >> 1] >> 1));
          // Silence is held back until speech follows it, so the sentence's long final pause can be cut.
          if (frame.some((s) => s > quietPeak || s < -quietPeak)) { for (const q of quiet.splice(0)) send(q); send(frame); }
          else if (frame.length > 0) quiet.push(frame);
          if (status === IDLE) break;
        }
      }
      let tail = tailSamples;
      for (const q of quiet) { if (tail <= 0) break; send(q.subarray(0, tail)); tail -= q.length; }
      if (filled > 0) parentPort.postMessage({ id, pcm: chunk.slice(0, filled) });
    } catch (err) {
      m._pico_resetEngine(engine, 0);
      throw err;
    } finally {
      m._free(input.at);
    }
  }

  parentPort.on('message', ({ id, text }) => {
    try {
      speak(id, text);
      parentPort.postMessage({ id, done: true });
    } catch (err) {
      parentPort.postMessage({ id, error: String(err && err.message || err) });
    }
  });
  parentPort.postMessage({ ready: true, sampleRate: workerData.sampleRate });
})().catch((err) => parentPort.postMessage({ failed: String(err && err.message || err) }));
`;

/** One engine per lingware folder, for the process: its worker holds the lingware loaded. */
const engines = new Map<string, () => SpeechWorkerEngine>();

function engineFor(lingware: PicoLingware): () => SpeechWorkerEngine {
  let engine = engines.get(lingware.dir);
  if (!engine) {
    engine = sharedEngine({
      label: 'SVOX Pico',
      sampleRate: PICO_SAMPLE_RATE,
      source: WORKER_SOURCE,
      workerData: () => ({
        moduleUrl: pathToFileURL(createRequire(import.meta.url).resolve('@echogarden/svoxpico-wasm')).href,
        files: readPicoLingware(lingware),
        sampleRate: PICO_SAMPLE_RATE,
        chunkSamples: CHUNK_SAMPLES,
        quietPeak: QUIET_PEAK,
        tailSamples: TAIL_SAMPLES,
      }),
      error: (message) => new PicoError(message),
      loadError: (message) => new PicoLoadError(message),
    });
    engines.set(lingware.dir, engine);
  }
  return engine;
}

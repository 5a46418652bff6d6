import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import { sharedEngine, speakOn } from './speech-worker.ts';

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
 * no system package. Synthesis (~50–110 ms a sentence) runs in the process's speech worker
 * (speech-worker.ts), loaded on first use.
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
  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    return speakOn(engine, { text, voice: this.voice, wordsPerMinute: this.wordsPerMinute }, signal, this.timeoutMs);
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

const engine = sharedEngine({
  label: 'espeak-ng',
  sampleRate: ESPEAK_SAMPLE_RATE,
  source: WORKER_SOURCE,
  workerData: () => ({ moduleUrl: pathToFileURL(createRequire(import.meta.url).resolve('@echogarden/espeak-ng-emscripten')).href }),
  error: (message) => new EspeakError(message),
});

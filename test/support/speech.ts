/**
 * French speech for voice tests, generated in-process by espeak-ng (WASM, French voice): scripted
 * phrases, silences, mid-sentence pauses and noise at 16 kHz s16 mono, with the ground truth of
 * where speech is. Plus a WAV writer/reader (16-bit PCM mono) for fake microphones and the CLI.
 */
import { readFile, writeFile } from 'node:fs/promises';
import createEspeak, { type EspeakWorker } from '@echogarden/espeak-ng-emscripten';
import { resample } from '../../machines/voice/resample.ts';
import { readWav as readWavBytes, writeWav as writeWavBytes } from '@kohami/kiosk-client/node';

export const SPEECH_SAMPLE_RATE = 16_000;
/** Samples quieter than this are espeak's own silence, not speech (for the ground truth). */
const AUDIBLE = 200;

let worker: Promise<EspeakWorker> | undefined;

function espeak(): Promise<EspeakWorker> {
  worker ??= createEspeak().then((module) => {
    const instance = new module.eSpeakNGWorker();
    if (instance.set_voice('fr') !== 0) throw new Error('espeak-ng: no French voice');
    return instance;
  });
  return worker;
}

/** One French phrase spoken by espeak-ng, resampled to 16 kHz. */
export async function frenchSpeech(text: string): Promise<Int16Array> {
  const tts = await espeak();
  const chunks: Int16Array[] = [];
  tts.synthesize(text, (samples) => {
    chunks.push(samples);
    return false;
  });
  return resample(concat(chunks), tts.get_samplerate(), SPEECH_SAMPLE_RATE);
}

export function silence(ms: number): Int16Array {
  return new Int16Array(msToSamples(ms));
}

/** Deterministic white noise (a fan, a street) at `amplitude` peak. */
export function noise(ms: number, amplitude: number, seed = 1): Int16Array {
  const out = new Int16Array(msToSamples(ms));
  let state = seed >>> 0 || 1;
  for (let i = 0; i < out.length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = Math.round(((state >>> 0) / 0xffff_ffff - 0.5) * 2 * amplitude);
  }
  return out;
}

export type ScriptPart = string | { silenceMs: number } | { noiseMs: number; amplitude: number };

export interface SpeechSegment {
  startMs: number;
  endMs: number;
}

export interface ScriptedAudio {
  pcm: Int16Array;
  /** Where each spoken phrase is audible (espeak's leading and trailing silence excluded). */
  speech: SpeechSegment[];
  durationMs: number;
}

/** Concatenates phrases, silences and noise; records where speech truly is. */
export async function speechScript(parts: readonly ScriptPart[]): Promise<ScriptedAudio> {
  const pieces: Int16Array[] = [];
  const speech: SpeechSegment[] = [];
  let offset = 0;
  for (const part of parts) {
    let piece: Int16Array;
    if (typeof part === 'string') {
      piece = await frenchSpeech(part);
      const first = piece.findIndex((sample) => Math.abs(sample) > AUDIBLE);
      let last = piece.length - 1;
      while (last > first && Math.abs(piece[last]!) <= AUDIBLE) last--;
      if (first >= 0) speech.push({ startMs: samplesToMs(offset + first), endMs: samplesToMs(offset + last + 1) });
    } else if ('silenceMs' in part) {
      piece = silence(part.silenceMs);
    } else {
      piece = noise(part.noiseMs, part.amplitude, offset + 1);
    }
    pieces.push(piece);
    offset += piece.length;
  }
  return { pcm: concat(pieces), speech, durationMs: samplesToMs(offset) };
}

/** Cuts audio into kiosk-sized chunks (`ms` each, the last shorter). */
/** `ms` of a 200 Hz tone at 16 kHz, in 20 ms frames: stands for speech where no detector listens (what a listener hands the recognizer). */
export function toneFrames(ms: number): Int16Array[] {
  return chunks(Int16Array.from({ length: msToSamples(ms) }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 200 * i) / SPEECH_SAMPLE_RATE))), 20);
}

export function chunks(pcm: Int16Array, ms: number): Int16Array[] {
  const size = msToSamples(ms);
  const out: Int16Array[] = [];
  for (let i = 0; i < pcm.length; i += size) out.push(pcm.subarray(i, i + size));
  return out;
}

export function concat(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export const msToSamples = (ms: number, rate = SPEECH_SAMPLE_RATE): number => Math.round((ms * rate) / 1000);
export const samplesToMs = (samples: number, rate = SPEECH_SAMPLE_RATE): number => (samples * 1000) / rate;

/** A canonical 44-byte-header WAV of 16-bit PCM mono (the runtime's own writer). */
export function encodeWav(pcm: Int16Array, sampleRate = SPEECH_SAMPLE_RATE): Uint8Array {
  return writeWavBytes({ sampleRate, samples: pcm });
}

/** Reads a 16-bit PCM mono WAV at any rate (the runtime's own reader); throws on anything else. */
export function decodeWav(bytes: Uint8Array): { sampleRate: number; pcm: Int16Array } {
  const { sampleRate, samples } = readWavBytes(bytes);
  return { sampleRate, pcm: samples };
}

export async function writeWav(path: string, pcm: Int16Array, sampleRate = SPEECH_SAMPLE_RATE): Promise<void> {
  await writeFile(path, encodeWav(pcm, sampleRate));
}

export async function readWav(path: string): Promise<{ sampleRate: number; pcm: Int16Array }> {
  return decodeWav(await readFile(path));
}

import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { findPicoLingware, PICO_LINGWARE_DIR } from '../../adapters/voice/pico-lingware.ts';
import { PicoSpeaker } from '../../adapters/voice/pico-speaker.ts';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import { resample } from '../../machines/voice/resample.ts';
import { loadConfig } from '../../runtime/config.ts';
import { bannerLines } from '../../runtime/main.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';

/**
 * The offline voice through a real kiosk socket, on two runtimes without MISTRAL_API_KEY: one on this
 * machine's SVOX Pico lingware (Debian's libttspico-data, which `.ci/run` installs), one told a lingware
 * folder that is empty, as a machine without the package. A typed « Bonjour » gets the senior's greeting,
 * a pre-synthesized line: the kiosk's audio is compared with each voice's own rendering of that line.
 */
const OUTPUT_RATE = 24_000;
/** A runtime of its own, opening PGlite in the test: real time, stretched by a loaded machine. */
const OWN_RUNTIME_TEST_MS = 120_000;
/** Likeness (below) above this: the same voice; below OTHER_VOICE: another one. */
const SAME_VOICE = 0.7;
const OTHER_VOICE = 0.4;

let withPico: TestRuntime;
let withoutPico: TestRuntime;
let emptyDir: string;

beforeAll(async () => {
  emptyDir = await mkdtemp(path.join(tmpdir(), 'kohami-no-pico-'));
  [withPico, withoutPico] = await Promise.all([startTestRuntime(), startTestRuntime({}, { PICO_LINGWARE_DIR: emptyDir })]);
}, OWN_RUNTIME_TEST_MS);
afterAll(async () => {
  await Promise.all([withPico?.close(), withoutPico?.close()]);
});

async function render(speaker: SpeakerPort, text: string): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of speaker.synthesize(text, new AbortController().signal)) chunks.push(chunk);
  return resample(concat(chunks), speaker.sampleRate, OUTPUT_RATE);
}

/** The likeness of `a` and `b` over `a`'s samples [from, from + n): their best normalized correlation within ±`maxShift` samples. */
function correlation(a: Int16Array, b: Int16Array, from: number, n: number, maxShift: number): number {
  let best = 0;
  for (let shift = -maxShift; shift <= maxShift; shift++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = from; i < from + n; i++) {
      const y = b[i + shift];
      if (y === undefined) continue;
      ab += a[i]! * y;
      aa += a[i]! * a[i]!;
      bb += y * y;
    }
    best = Math.max(best, ab / Math.sqrt(aa * bb || 1));
  }
  return best;
}

/**
 * How alike two renderings are: over `a`'s voiced 50 ms windows, the mean of each window's best
 * correlation with `b` within ±10 ms (a voice's renderings of one text drift by a few ms along the
 * sentence). Measured on the greeting: the same voice's renderings 0.90 (espeak-ng) and 0.97 (Pico),
 * the two voices' 0.15–0.19.
 */
function likeness(a: Int16Array, b: Int16Array): number {
  const window = (50 * OUTPUT_RATE) / 1000;
  const voiced = 500;
  let sum = 0;
  let windows = 0;
  for (let from = 0; from + window <= Math.min(a.length, b.length); from += window) {
    if (Math.sqrt(a.subarray(from, from + window).reduce((e, s) => e + s * s, 0) / window) < voiced) continue;
    sum += correlation(a, b, from, window, window / 5);
    windows++;
  }
  return windows === 0 ? 0 : sum / windows;
}

/** The greeting a typed « Bonjour » gets, and the audio the kiosk received for it at OUTPUT_RATE. */
async function greeting(rt: TestRuntime): Promise<{ text: string; audio: Int16Array }> {
  const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  try {
    expect(await k.start(true, OUTPUT_RATE)).toMatchObject({ mode: 'voice', audio: { voiceInput: false, output: { sampleRate: OUTPUT_RATE } } });
    k.send({ type: 'turn', turnId: 'hello', transcript: 'Bonjour' });
    const done = await k.next((f) => f.type === 'reply.done' && f.turnId === 'hello', 0);
    expect(done).toMatchObject({ flux: 'cache' });
    expect(await k.next((f) => f.type === 'reply.audio.start' && f.turnId === 'hello', 0)).toMatchObject({ sampleRate: OUTPUT_RATE });
    await k.next((f) => f.type === 'reply.audio.end' && f.turnId === 'hello', 0);
    const frames = k.audio.filter((a) => a.turnId === 'hello');
    const audio = new Int16Array(frames.reduce((n, a) => n + a.pcm.length, 0));
    for (const frame of frames) audio.set(frame.pcm, frame.sampleOffset);
    return { text: done.text as string, audio };
  } finally {
    k.close();
  }
}

describe('the offline voice a kiosk hears', () => {
  it('SVOX Pico installed: the greeting is Pico’s, at the kiosk’s rate, and the banner says so', async () => {
    const lingware = findPicoLingware(PICO_LINGWARE_DIR);
    expect(lingware, `libttspico-data is not installed in ${PICO_LINGWARE_DIR}: see the README's prerequisites`).not.toBeNull();
    const { text, audio } = await greeting(withPico);
    const pico = await render(new PicoSpeaker({ lingware: lingware! }), text);
    const espeak = await render(new EspeakSpeaker(), text);
    expect(likeness(audio, pico)).toBeGreaterThan(SAME_VOICE);
    expect(likeness(audio, espeak)).toBeLessThan(OTHER_VOICE);
    expect(Math.abs(audio.length - pico.length)).toBeLessThanOrEqual(0.05 * OUTPUT_RATE);
    const config = loadConfig({ KOHAMI_ENV: 'test', DEV_KIOSK_TOKEN: KIOSK_TOKEN, DEV_ADMIN_TOKEN: ADMIN_TOKEN });
    expect(bannerLines(config, withPico, withPico.seed, true)).toContain(
      `  voice:            replies spoken offline by SVOX Pico (${PICO_LINGWARE_DIR}); voice INPUT needs MISTRAL_API_KEY (no offline speech-to-text): type your turns`,
    );
  }, OWN_RUNTIME_TEST_MS);

  it('SVOX Pico absent: the greeting is espeak-ng’s, at the kiosk’s rate, and the banner says so', async () => {
    const { text, audio } = await greeting(withoutPico);
    const espeak = await render(new EspeakSpeaker(), text);
    const pico = await render(new PicoSpeaker({ lingware: findPicoLingware(PICO_LINGWARE_DIR)! }), text);
    expect(likeness(audio, espeak)).toBeGreaterThan(SAME_VOICE);
    expect(likeness(audio, pico)).toBeLessThan(OTHER_VOICE);
    const config = loadConfig({ KOHAMI_ENV: 'test', DEV_KIOSK_TOKEN: KIOSK_TOKEN, DEV_ADMIN_TOKEN: ADMIN_TOKEN, PICO_LINGWARE_DIR: emptyDir });
    expect(bannerLines(config, withoutPico, withoutPico.seed, true).find((l) => l.startsWith('  voice:'))).toMatch(/replies spoken offline by espeak-ng;/);
  }, OWN_RUNTIME_TEST_MS);
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { MistralSpeaker, MISTRAL_TTS_SAMPLE_RATE, SpeechServiceError } from '../../adapters/voice/mistral-speaker.ts';
import { float32ToS16, Resampler } from '../../machines/voice/resample.ts';
import { FallbackSpeaker, NoSpeechError } from '../../runtime/voice/fallback-speaker.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, fakeSpeechDurationMs, fakeSpeechPcm } from '../support/fake-voxtral.ts';

/**
 * Mistral's speech stream failing part-way through a sentence. Before, the fallback speaker spoke a
 * sentence only when the primary failed before any audio: a 4 s reply cut after 0.4 s came out as
 * 0.4 s of audio, while the caption and the window kept the whole text the senior never heard.
 */

/** 66 characters: 3.96 s of the fake's speech. */
const SENTENCE = 'Oh, je me souviens bien de ce jour, nous étions au bord de la mer.';
const CUT_MS = 400;
/**
 * 0.4 s at the prior pace (70 ms a character) is 5.7 characters, 5.1 once lowered by a tenth: inside
 * « je », the word in progress, which is said again.
 */
const REST = 'je me souviens bien de ce jour, nous étions au bord de la mer.';

const voxtral = new FakeVoxtral();
const mistral = new FakeMistral(voxtral);
const errors: Error[] = [];
const speaker = () =>
  new FallbackSpeaker({ primary: new MistralSpeaker({ apiKey: 'test-key', baseUrl: mistral.baseUrl, env: 'test' }), fallback: new EspeakSpeaker(), onSpeechError: (err) => errors.push(err) });

let restSamples: number;

beforeAll(async () => {
  await mistral.start();
  // What espeak-ng makes of the rest, at the primary's rate: the audio the senior should get after the cut.
  const resampler = new Resampler(new EspeakSpeaker().sampleRate, MISTRAL_TTS_SAMPLE_RATE);
  restSamples = 0;
  for await (const chunk of new EspeakSpeaker().synthesize(REST, new AbortController().signal)) restSamples += resampler.push(chunk).length;
  restSamples += resampler.flush().length;
});
afterAll(async () => {
  await voxtral.stop();
  await mistral.stop();
});
beforeEach(() => {
  errors.length = 0;
  voxtral.speechRequests.length = 0;
  expect(fakeSpeechDurationMs(SENTENCE)).toBe(3_960);
});
afterEach(() => {
  voxtral.speechFault = null;
  vi.useRealTimers();
});

const total = (chunks: Int16Array[]) => chunks.reduce((n, c) => n + c.length, 0);
const cutSamples = (CUT_MS * MISTRAL_TTS_SAMPLE_RATE) / 1000;

const ESPEAK_JITTER_SAMPLES = (50 * MISTRAL_TTS_SAMPLE_RATE) / 1000;

/** The chunks are Mistral's first 0.4 s, sample for sample, then the rest in espeak's voice. */
function expectCutThenRest(chunks: Int16Array[]): void {
  const all = new Int16Array(total(chunks));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  expect(all.subarray(0, cutSamples)).toEqual(float32ToS16(fakeSpeechPcm(SENTENCE, 'tone')).subarray(0, cutSamples));
  // espeak-ng's length varies by a few milliseconds from one rendering to the next; « Oh, » said again would add some 300 ms.
  expect(Math.abs(all.length - (cutSamples + restSamples))).toBeLessThan(ESPEAK_JITTER_SAMPLES);
  // The rest is speech (espeak), not the fake's tone going on.
  expect(all.length / MISTRAL_TTS_SAMPLE_RATE).toBeGreaterThan(2.5);
}

describe('a speech stream cut mid-sentence', () => {
  it('the connection dropped after 0.4 s of audio: the rest of the sentence, from the word in progress, in the offline voice', async () => {
    voxtral.speechFault = { afterMs: CUT_MS, kind: 'drop' };
    const chunks: Int16Array[] = [];
    for await (const chunk of speaker().synthesize(SENTENCE, new AbortController().signal)) chunks.push(chunk);
    expectCutThenRest(chunks);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SpeechServiceError);
    expect(voxtral.speechRequests).toHaveLength(1);
  });

  it('the stream stalled after 0.4 s of audio: the rest follows once the primary has been silent for its bound', async () => {
    voxtral.speechFault = { afterMs: CUT_MS, kind: 'stall' };
    // Only timeouts are simulated (the speaker's bounds); the HTTP stream and espeak's worker are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const chunks: Int16Array[] = [];
    let settled = false;
    const speaking = (async () => {
      for await (const chunk of speaker().synthesize(SENTENCE, new AbortController().signal)) chunks.push(chunk);
    })().finally(() => (settled = true));
    await until(() => total(chunks) === cutSamples);
    // The fallback speaker's bound on the primary's silence, its default: not a sample more before it.
    await vi.advanceTimersByTimeAsync(1_499);
    expect(total(chunks)).toBe(cutSamples);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => settled);
    await speaking;
    expectCutThenRest(chunks);
    expect(errors.map((e) => e.name)).toEqual([NoSpeechError.name]);
    await until(() => voxtral.speechRequests[0]?.closedEarly === true);
  });
});

/** Lets sockets, workers and promises run until `check` holds, for at most 10 s of wall-clock time (setImmediate is never faked here). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

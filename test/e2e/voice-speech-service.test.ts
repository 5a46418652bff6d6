import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alignedSnrDb } from '../support/audio-quality.ts';
import type { FakeMistral } from '../support/fake-mistral.ts';
import { fakeSpeechDurationMs, fakeSpeechPcm, FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat } from '../support/speech.ts';
import { startVoiceRuntime } from '../support/voice-runtime.ts';
import { OPUS_START, VoiceKiosk } from '../support/voice-kiosk.ts';

/**
 * A voice kiosk that takes Opus, against the real runtime whose speech service misbehaves as others
 * report it does (test/support/service-behaviours.ts): the senior hears every sentence.
 */
const RATE = 24_000;
/** Opus is lossy: the decoded tone is compared with what the fake spoke, aligned for the codec's delay. */
const MIN_SNR_DB = 8;

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ rt, voxtral, mistral, stop } = await startVoiceRuntime('speech-service'));
}, 60_000);
afterAll(() => stop?.());

/** The runtime's `kohami_opus_encoded_seconds_total`: the reply audio it encoded itself. */
const encodedSeconds = async () => (await rt.metrics.registry.getSingleMetric('kohami_opus_encoded_seconds_total')!.get()).values[0]?.value ?? 0;

/** A typed turn on an Opus kiosk whose reply is `sentences`: the kiosk's frames once its audio has ended, and the speech requests it cost. */
async function hear(turnId: string, sentences: string[]) {
  mistral.mode = { kind: 'stream', chunks: sentences.map((s, i) => (i < sentences.length - 1 ? `${s} ` : s)) };
  const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  k.send(OPUS_START);
  await k.next('session.ready');
  const asked = voxtral.speechRequests.length;
  const encodedBefore = await encodedSeconds();
  k.send({ type: 'turn', turnId, transcript: `Racontez-moi quelque chose (${turnId})` });
  const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === turnId, 0);
  k.close();
  return {
    end,
    marks: k.ofType('reply.audio.mark', turnId).map((m) => m.sampleOffset as number),
    audio: concat(k.audio.filter((a) => a.turnId === turnId).map((a) => a.pcm)),
    formats: voxtral.speechRequests.slice(asked).filter((r) => sentences.includes(String(r.body.input))).map((r) => r.body.response_format),
    encoded: (await encodedSeconds()) - encodedBefore,
  };
}

const samplesOf = (text: string) => (fakeSpeechDurationMs(text) * RATE) / 1000;

describe('a voice kiosk hears every sentence whatever the speech service does', () => {
  it('speech-raw-opus: raw Opus packets are relayed as they come, none encoded, and decode to what was spoken', async () => {
    voxtral.behaviours.add('speech-raw-opus');
    try {
      const sentences = ['Quelle bonne idée que ce marché,', 'le matin on y est bien.'];
      const heard = await hear('raw', sentences);
      expect(heard.formats).toEqual(['opus', 'opus']);
      expect(heard.encoded).toBe(0);
      expect(heard.marks).toEqual([samplesOf(sentences[0]!), samplesOf(sentences[0]!) + samplesOf(sentences[1]!)]);
      const spoken = concat(sentences.map((s) => Int16Array.from(fakeSpeechPcm(s, 'tone'), (x) => Math.round(x * 32767))));
      const lag = (RATE * 40) / 1000;
      expect(alignedSnrDb(spoken.subarray(0, heard.audio.length - lag), heard.audio, lag).snrDb).toBeGreaterThan(MIN_SNR_DB);
    } finally {
      voxtral.behaviours.delete('speech-raw-opus');
    }
  }, 30_000);

  it('speech-slow-first-packet: the first sentence is spoken by espeak-ng at the fallback’s bound, the second is asked as PCM and heard whole in Voxtral’s voice', async () => {
    voxtral.behaviours.add('speech-slow-first-packet');
    try {
      const sentences = ['Le marché du samedi est un vrai plaisir.', 'On y trouve des fruits et des fleurs.'];
      const heard = await hear('slow', sentences);
      expect(heard.formats).toEqual(['opus', 'pcm']);
      const [first, both] = heard.marks;
      // espeak-ng's rendering of the first sentence: heard, at its own length.
      expect(first).toBeGreaterThan(0);
      expect(first).not.toBe(samplesOf(sentences[0]!));
      // Voxtral's PCM of the second, encoded by the runtime.
      expect(both! - first!).toBe(samplesOf(sentences[1]!));
      expect(heard.encoded).toBeGreaterThan(0);
      expect(rt.logs.text).toContain('sentences are asked of the service as PCM from now on');
    } finally {
      voxtral.behaviours.delete('speech-slow-first-packet');
    }
  }, 30_000);
});

describe('the voice check at start', () => {
  it('the conforming service lists the configured voice: checked', () => {
    expect(voxtral.voicesRequests[0]?.query).toEqual({ limit: '100', offset: '0', type: 'all' });
    expect(rt.logs.text).toContain('speech voice checked: the service lists it');
  });

  it('a voice list that cannot be had is no reason to refuse to start', async () => {
    const closed = await new FakeVoxtral().start();
    const baseUrl = closed.baseUrl;
    await closed.stop();
    const started = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: baseUrl });
    try {
      expect(started.logs.text).toContain('speech voice not checked');
    } finally {
      await started.close();
    }
  }, 60_000);
});

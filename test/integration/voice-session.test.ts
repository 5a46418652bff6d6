import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import type { OpusCodecPort } from '../../machines/voice/voice.port.ts';
import { trackedCodec } from '../support/audio-quality.ts';
import type { AudioFormat, ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { loadConfig } from '../../runtime/config.ts';
import { createVoiceServices } from '../../runtime/voice/voice-services.ts';
import { CONTEXT_BIAS_BUDGET_MS } from '../../runtime/voice/transcription.ts';
import { voiceSessionFactory } from '../../runtime/voice/voice-session.ts';
import type { VoiceSessionHandle } from '../../runtime/voice/voice-session.types.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { DEFAULT_STREAMING_DELAY_MS, FakeVoxtral } from '../support/fake-voxtral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { chunks, concat, frenchSpeech, silence } from '../support/speech.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';

/**
 * One voice session driven directly (no kiosk socket), on the runtime's own live session, with
 * services built from a config of the test's choosing: the transcription stream's lifecycle.
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let kiosk: KioskClient;
/** « Bonjour », then a second of silence (ends the utterance at ENDPOINT_SILENCE_MS 300). */
let hello: Int16Array;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
  kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
  hello = concat([silence(200), await frenchSpeech('Bonjour, comment allez-vous ?'), silence(1000)]);
}, 60_000);

afterAll(async () => {
  kiosk?.close();
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

beforeEach(() => {
  voxtral.utterances.length = 0;
  voxtral.sockets.length = 0;
  voxtral.transcriptionLatencyMs = 0;
  mistral.mode = { kind: 'stream', chunks: ['Très bien.'] };
});

/** A voice session on the runtime's live session; `frames` collects what its kiosk would receive. */
async function voiceSession(sttBudgetMs: number, opus?: { codec: OpusCodecPort; input: AudioFormat; output: AudioFormat }): Promise<{ voice: VoiceSessionHandle; frames: ServerFrame[] }> {
  const config = loadConfig({ KOHAMI_ENV: 'test', MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, ...QUICK_ENDPOINT, STT_BUDGET_MS: String(sttBudgetMs) });
  const built = await createVoiceServices(config, { pool: rt.db.pool, consents: rt.consents, variations: loadCacheVariations(), metrics: rt.metrics, logger: rt.logger });
  const services = opus ? { ...built, opus: opus.codec } : built;
  const frames: ServerFrame[] = [];
  const link = { send: (frame: ServerFrame) => void frames.push(frame), sendAudio: () => undefined, unreadBytes: 0 };
  let turns = 0;
  const formats = opus ? { input: opus.input, output: opus.output } : { output: { encoding: 'pcm_s16le', sampleRate: 16_000 } as const };
  const voice = voiceSessionFactory(services).create({ session: rt.registry.list()[0]!, link, ...formats, aec: true, nextTurnId: () => `s${++turns}` });
  return { voice, frames };
}

const speak = (voice: VoiceSessionHandle, pcm: Int16Array) => {
  for (const chunk of chunks(pcm, 20)) voice.pushAudio(chunk);
};

describe('the transcription stream’s opening', () => {
  it('an opening that finishes after STT_BUDGET_MS gave up is closed, not adopted: the next sentence reaches a fresh stream whole', async () => {
    const { voice, frames } = await voiceSession(300);
    // The service accepts the socket only once the budget has given up on it.
    let accept!: () => void;
    voxtral.openingHeld = new Promise((resolve) => (accept = resolve));
    const sttErrors = async () => Number((await rt.metrics.registry.getSingleMetricAsString('kohami_speech_errors_total')).match(/service="stt"} (\d+)/)?.[1] ?? 0);
    const before = await sttErrors();
    speak(voice, hello);
    // No transcript within the budget (the SOS line, spoken on an attached kiosk: see the e2e tests).
    await expect.poll(() => sttErrors()).toBe(before + 1);
    // Its socket connected meanwhile (on a loaded machine perhaps only now), and waits to be accepted.
    await expect.poll(() => voxtral.sockets[0]?.closed).toBe(false);
    voxtral.openingHeld = null;
    accept();
    // The late socket opens (session configured), then is closed at once.
    await expect.poll(() => voxtral.sockets[0]?.updates).toHaveLength(1);
    await expect.poll(() => voxtral.sockets[0]!.closed).toBe(true);

    voxtral.utterances.push({ text: 'Bonjour comment allez-vous' });
    speak(voice, hello);
    await expect.poll(() => frames.find((f) => f.type === 'transcript.final')).toMatchObject({ text: 'Bonjour comment allez-vous' });
    // Every byte of the second sentence went to the new socket; none to the stale one.
    expect(voxtral.sockets[0]!.audioBytes).toBe(0);
    expect(voxtral.sockets[1]!.audioBytes).toBeGreaterThan(0);
    voice.close();
    await expect.poll(() => voxtral.openSockets).toBe(0);
  }, 20_000);

  it(`a database that does not answer delays the opening by ${CONTEXT_BIAS_BUDGET_MS} ms at most: the stream opens without the names`, async () => {
    const pool = rt.db.pool as pg.Pool;
    // Every connection of the pool taken: the names' queries wait for one (the pool has no connection timeout).
    const held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    try {
      const { voice, frames } = await voiceSession(2000);
      voxtral.utterances.push({ text: 'Bonjour comment allez-vous' });
      speak(voice, hello);
      await expect.poll(() => frames.find((f) => f.type === 'transcript.final')).toMatchObject({ text: 'Bonjour comment allez-vous' });
      expect(voxtral.sockets[0]!.updates[0]).not.toHaveProperty('context_bias');
      voice.close();
    } finally {
      for (const client of held) client.release();
    }
  }, 20_000);
});

describe('Opus microphone', () => {
  it('packets are decoded to the 16 kHz pipeline and transcribed; a malformed one is refused; the decoder is freed at close', async () => {
    const { codec, open } = trackedCodec();
    const { voice, frames } = await voiceSession(2000, { codec, input: { encoding: 'opus', sampleRate: 16_000 }, output: { encoding: 'pcm_s16le', sampleRate: 24_000 } });
    expect(open.size).toBe(1);
    voxtral.utterances.push({ text: 'Bonjour comment allez-vous' });
    const mic = opusCodec().encoder(16_000);
    expect(voice.pushPacket(Uint8Array.of(0x0a, 200, 1, 2, 3))).toMatch(/one Opus packet/);
    for (const chunk of chunks(hello, 20)) if (chunk.length === mic.frameSamples) expect(voice.pushPacket(mic.encode(chunk))).toBeNull();
    mic.close();
    await expect.poll(() => frames.find((f) => f.type === 'transcript.final')).toMatchObject({ text: 'Bonjour comment allez-vous' });
    // The recognizer heard 16 kHz PCM (32 bytes a ms): the speech, not the packets.
    expect(voxtral.sockets[0]!.audioBytes / 32).toBeGreaterThan(1000);
    voice.close();
    expect(open.size).toBe(0);
    // After close, packets are ignored, not decoded with a freed decoder.
    expect(voice.pushPacket(Uint8Array.of(0x08, 0))).toBeNull();
  }, 20_000);
});

describe('a lagging event loop', () => {
  /** The recognizer's bytes for « hello » fed to a fresh voice session, and whether its early flush made the turn. */
  const heard = async (feed: (voice: VoiceSessionHandle, frames: Int16Array[]) => Promise<void>) => {
    const { voice, frames } = await voiceSession(5000);
    voxtral.utterances.push({ text: 'Bonjour comment allez-vous' });
    // No interim words before the end: the utterance ends on its audio alone.
    voxtral.streamingDelayMs = 60_000;
    onTestFinished(() => void (voxtral.streamingDelayMs = DEFAULT_STREAMING_DELAY_MS));
    const earlyTurns = async () => (await rt.metrics.registry.getSingleMetric('kohami_stt_early_flushes_total')!.get()).values.find((v) => v.labels.outcome === 'turn')?.value ?? 0;
    const before = await earlyTurns();
    const first = voxtral.sockets.length;
    await feed(voice, chunks(hello, 20));
    await expect.poll(() => frames.find((f) => f.type === 'transcript.final')).toMatchObject({ text: 'Bonjour comment allez-vous' });
    voice.close();
    return { bytes: voxtral.sockets.slice(first).reduce((n, r) => n + r.audioBytes, 0), earlyTurns: (await earlyTurns()) - before };
  };

  it('changes nothing the recognizer hears: frames handed over all at once send the bytes of frames at the kiosk’s pace, the early flush still at STT_EARLY_FLUSH_MS', async () => {
    // The kiosk's pace (1.3× real time, as the e2e kiosks stream): each frame analysed before the next comes on an idle machine.
    const paced = await heard(async (voice, frames) => {
      for (const frame of frames) {
        voice.pushAudio(frame);
        await new Promise((resolve) => setTimeout(resolve, 20 / 1.3));
      }
    });
    expect(paced.earlyTurns).toBe(1);
    // A loaded machine (or a flood of text frames) lets frames pile up: every one arrives before any is analysed.
    const together = await heard(async (voice, frames) => {
      for (const frame of frames) voice.pushAudio(frame);
    });
    expect(together).toEqual(paced);
  }, 30_000);
});


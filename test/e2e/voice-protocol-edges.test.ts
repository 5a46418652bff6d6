import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIO_BUDGET_REAL_TIME_FACTOR, AUDIO_BURST_SECONDS } from '../../runtime/kiosk/token-bucket.ts';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { sessionLines } from '../../runtime/voice/line-cache.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { DEFAULT_STREAMING_DELAY_MS, FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';

/** Robustness of the kiosk socket's voice paths: what a kiosk sends must never take the process or another session down. */

const ASKED = 'Je suis allée au marché ce matin avec ma fille';
/** 20 ms frames of 16 kHz s16 audio. */
const FRAME_SAMPLES = 320;

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
/** The utterance then a second of silence, in whole 20 ms frames (no short last frame to be refused). */
let utterance: Int16Array;
/** A second senior's kiosk token. */
let otherToken: string;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-voice-edges-')), 'pglite');
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, PGLITE_DATA_DIR: dir, ...QUICK_ENDPOINT, STT_BUDGET_MS: '1500' });
  const speech = concat([silence(200), await frenchSpeech(`${ASKED}.`), silence(1000)]);
  utterance = concat([speech, new Int16Array((FRAME_SAMPLES - (speech.length % FRAME_SAMPLES)) % FRAME_SAMPLES)]);
  const seniorId = await rt.directory.createSenior({ displayName: 'Jeanne', preferredName: 'Jeanne', onboardingDone: true });
  otherToken = generateToken('kiosk');
  await rt.directory.addDevice(seniorId, otherToken);
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

async function voiceKiosk(token = KIOSK_TOKEN): Promise<VoiceKiosk> {
  const k = await VoiceKiosk.connect(rt.wsUrl, token);
  expect(await k.start()).toMatchObject({ mode: 'voice', audio: { voiceInput: true } });
  return k;
}

/** A typed turn in a voice session is answered with captions and reply audio to its end. */
async function answeredAloud(k: VoiceKiosk, turnId: string): Promise<void> {
  const from = k.frames.length;
  k.send({ type: 'turn', turnId, transcript: 'Bonjour' });
  expect(await k.next((f) => f.type === 'reply.done' && f.turnId === turnId, from)).toMatchObject({ flux: 'cache' });
  const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === turnId, from);
  expect(end.durationMs).toBeGreaterThan(0);
}

/** Frames before a ping are all handled once its pong is back (one socket, in order). */
async function settled(k: VoiceKiosk): Promise<void> {
  const from = k.frames.length;
  k.send({ type: 'ping' });
  await k.next('pong', from);
}

describe('a turnId the reply-audio frame header cannot carry', () => {
  it('is refused with invalid_frame; the process, the session and another senior’s session live on', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Bien.'] };
    const marie = await voiceKiosk();
    const jeanne = await voiceKiosk(otherToken);
    // Marie's greetings are pre-synthesized for her session: once rendered, « Bonjour » is answered from RAM
    // (the path that, with the turnId below, used to throw outside any handler and end the process).
    const greetings = sessionLines(loadCacheVariations(), { preferredName: 'Marie', isFreshSenior: false }).personal;
    const rendered = (text: string) => voxtral.speechRequests.some((r) => r.body.input === text && r.completed);
    await expect.poll(() => greetings.filter((g) => !rendered(g))).toEqual([]);

    // 128 « € »: within the 128 characters of a turnId, but 384 bytes in UTF-8 where a frame header holds 255.
    marie.send({ type: 'turn', turnId: '€'.repeat(128), transcript: 'Bonjour' });
    const refused = await marie.next('error');
    expect(refused).toEqual({ type: 'error', code: 'invalid_frame', message: "invalid turn frame: turnId: must be at most 255 bytes in UTF-8 (the reply-audio frame header's limit)" });
    expect(marie.ofType('reply.done')).toEqual([]);

    await answeredAloud(marie, 'après');
    await answeredAloud(jeanne, 't1');
    // The longest turnId that fits (85 × 3 bytes) is spoken, its frames tagged with it.
    const longest = '€'.repeat(85);
    await answeredAloud(marie, longest);
    expect(marie.audio.filter((a) => a.turnId === longest).length).toBeGreaterThan(0);
    marie.close();
    jeanne.close();
  }, 30_000);
});

describe('microphone frame sizes (10–200 ms of 16 kHz s16: 320 to 6,400 bytes, even)', () => {
  it.each([
    ['tiny (one sample)', 2],
    ['just under 10 ms', 318],
    ['odd', 641],
    ['over 200 ms', 6402],
  ])('%s: %i bytes → invalid_frame naming the size, and the session lives on', async (_label, size) => {
    const k = await voiceKiosk();
    k.socket.send(Buffer.alloc(size));
    const error = await k.next('error');
    expect(error).toMatchObject({ code: 'invalid_frame', message: expect.stringContaining(`from 320 to 6400; got ${size} bytes`) });
    await settled(k);
    k.close();
  });

  it('10 ms and 200 ms frames are taken without a word', async () => {
    const k = await voiceKiosk();
    k.socket.send(Buffer.alloc(320));
    k.socket.send(Buffer.alloc(6400));
    await settled(k);
    expect(k.ofType('error')).toEqual([]);
    k.close();
  });

  it('a size refusal does not hide a budget refusal: one notice a second per kind', async () => {
    const k = await voiceKiosk();
    k.socket.send(Buffer.alloc(641));
    // Four seconds of audio at once: over the audio budget's burst (three seconds of audio).
    expect(20 * 6400).toBeGreaterThan(AUDIO_BURST_SECONDS * AUDIO_BUDGET_REAL_TIME_FACTOR * 32_000);
    for (let i = 0; i < 20; i++) k.socket.send(Buffer.alloc(6400));
    await settled(k);
    expect(k.ofType('error').map((e) => e.code)).toEqual(['invalid_frame', 'audio_rate_limited']);
    k.close();
  });

  it('refused frames lose nothing else: one notice a second, and the utterance around them is heard whole', async () => {
    /** The recognizer's bytes for the utterance, with bad frames slipped between its frames or not. */
    const heard = async (bad: boolean) => {
      voxtral.utterances.push({ text: ASKED });
      const k = await voiceKiosk();
      const first = voxtral.sockets.length;
      const started = performance.now();
      let badFrames = 0;
      for (let i = 0; i * FRAME_SAMPLES < utterance.length; i++) {
        // Real time at 1.3×, within the audio budget (1.5×) — unless refused frames were charged to it.
        const wait = started + (i * 20) / 1.3 - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        if (bad && i % 10 === 5) {
          for (const size of [2, 641, 6402]) k.socket.send(Buffer.alloc(size));
          badFrames += 3;
        }
        const frame = utterance.subarray(i * FRAME_SAMPLES, (i + 1) * FRAME_SAMPLES);
        k.socket.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
      }
      const sendingMs = performance.now() - started;
      expect(await k.next('transcript.final', 0)).toMatchObject({ text: ASKED });
      await settled(k);
      // Dozens of bad frames over seconds: one invalid_frame notice a second at most, no audio budget refusal.
      const errors = k.ofType('error');
      expect(errors.map((e) => e.code)).toEqual(errors.map(() => 'invalid_frame'));
      if (bad) {
        expect(badFrames).toBeGreaterThan(30);
        expect(errors.length).toBeGreaterThanOrEqual(2);
        expect(errors.length).toBeLessThanOrEqual(Math.ceil(sendingMs / 1000));
      } else {
        expect(errors).toEqual([]);
      }
      k.close();
      return voxtral.sockets.slice(first).reduce((n, s) => n + s.audioBytes, 0);
    };
    // The end of an utterance follows its interim words, which come in time, not audio: none comes
    // before the end here, so the utterance ends on its audio alone (the no-cue wait).
    voxtral.streamingDelayMs = 60_000;
    try {
      const clean = await heard(false);
      expect(clean).toBeGreaterThan(0);
      expect(await heard(true)).toBe(clean);
    } finally {
      voxtral.streamingDelayMs = DEFAULT_STREAMING_DELAY_MS;
    }
  }, 30_000);
});

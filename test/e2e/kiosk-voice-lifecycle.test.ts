import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence } from '../support/speech.ts';
import { VOICE_START, VoiceKiosk } from '../support/voice-kiosk.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';

/**
 * A voice session lives as long as its session on that socket: when the session ends or moves to another
 * socket, its speech resources (transcription socket, listener, reply audio, lines) go, even if the kiosk
 * keeps the old socket open. Real runtime, real sockets, the fake Voxtral counts the transcription sockets.
 */

const ASKED = 'Je suis allée au marché ce matin avec ma fille';

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let utterance: Int16Array;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-voice-lifecycle-')), 'pglite');
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, PGLITE_DATA_DIR: dir, ...QUICK_ENDPOINT, STT_BUDGET_MS: '1500' });
  // Short: what is said does not matter here (the fake is scripted), only that it is speech, then an end of turn.
  utterance = concat([silence(200), await frenchSpeech('Oui, bonjour.'), silence(700)]);
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

/** A voice kiosk whose senior has spoken once: its session keeps a transcription socket open for the next utterance. */
async function heardOnce(): Promise<VoiceKiosk> {
  mistral.mode = { kind: 'stream', chunks: ['Bien.'] };
  const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  expect(await k.start()).toMatchObject({ mode: 'voice', audio: { voiceInput: true } });
  voxtral.utterances.push({ text: ASKED });
  await k.speak(utterance);
  const final = await k.next('transcript.final', 0);
  await k.next((f) => f.type === 'reply.audio.end' && f.turnId === final.turnId, 0);
  expect(voxtral.openSockets).toBe(1);
  return k;
}

/** Frames before a ping are all handled once its pong is back. */
async function settled(k: VoiceKiosk): Promise<void> {
  const from = k.frames.length;
  k.send({ type: 'ping' });
  await k.next('pong', from);
}

describe('a voice session ends with its session, not with its socket', () => {
  it('resumed on another socket: the old socket, left open, keeps no transcription socket; session.start on it still works', async () => {
    const old = await heardOnce();
    const elsewhere = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    const before = old.frames.length;
    elsewhere.send({ type: 'session.start', resume: true });
    expect(await elsewhere.next('session.ready')).toMatchObject({ resumed: true });
    expect(await old.next('session.closed', before)).toEqual({ type: 'session.closed', reason: 'replaced' });
    expect(old.socket.readyState).toBe(old.socket.OPEN);
    // The old socket's voice session let go of its speech services; the session lives on, elsewhere, in text mode.
    await expect.poll(() => voxtral.openSockets).toBe(0);
    await settled(old);
    expect(old.ofType('error')).toEqual([]);
    old.socket.send(Buffer.alloc(640));
    expect(await old.next('error')).toMatchObject({ code: 'binary_not_supported' });

    // The old socket takes the session back, in voice mode, and is listened to again.
    const from = old.frames.length;
    const moved = elsewhere.frames.length;
    old.send({ ...VOICE_START, resume: true });
    expect(await old.next('session.ready', from)).toMatchObject({ resumed: true, mode: 'voice', audio: { voiceInput: true } });
    expect(await elsewhere.next('session.closed', moved)).toEqual({ type: 'session.closed', reason: 'replaced' });
    voxtral.utterances.push({ text: ASKED });
    await old.speak(utterance);
    expect(await old.next('transcript.final', from)).toMatchObject({ text: ASKED });
    expect(voxtral.openSockets).toBe(1);
    old.close();
    elsewhere.close();
    await expect.poll(() => voxtral.openSockets).toBe(0);
  }, 40_000);

  it.each(['operator', 'replaced'] as const)('closed (%s) while the kiosk keeps its socket open: the transcription socket goes; a new session.start is listened to', async (reason) => {
    const k = await heardOnce();
    const before = k.frames.length;
    if (reason === 'operator') {
      expect(rt.registry.close(rt.seed!.seniorId, 'operator')).toBe(true);
    } else {
      // Another kiosk of the same senior starts afresh: this session is closed, replaced.
      const other = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
      other.send({ type: 'session.start' });
      await other.next('session.ready');
      other.close();
    }
    expect(await k.next('session.closed', before)).toEqual({ type: 'session.closed', reason });
    await expect.poll(() => voxtral.openSockets).toBe(0);
    expect(k.socket.readyState).toBe(k.socket.OPEN);

    const from = k.frames.length;
    expect(await k.start()).toMatchObject({ resumed: false, mode: 'voice', audio: { voiceInput: true } });
    voxtral.utterances.push({ text: ASKED });
    await k.speak(utterance);
    expect(await k.next('transcript.final', from)).toMatchObject({ text: ASKED });
    k.close();
    await expect.poll(() => voxtral.openSockets).toBe(0);
  }, 40_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { GAP_AFTER_MS } from '../../runtime/voice/audio-gaps.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, type SpeechSpan } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { speechScript } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { PRE_ROLL_MS } from '../../machines/voice/voice.port.ts';

/**
 * A kiosk with a speech gate (session.start `audio.kiosk.gate`, session.ready `audio.gaps`) stops
 * sending when the senior stops speaking. Through a real socket, default end-of-turn settings, the
 * listener's real detectors: the audio ends with the speech (or a short hang-over), then nothing comes,
 * and the turn is still answered, after the silence the endpointing would have waited on a microphone
 * that went on. A kiosk that declares no gate streams on: a gap in its audio is a network stall, and
 * nothing is filled into it.
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
const settings: Config = loadConfig({ STT_RECHECK_MS: '0' });
/** Tolerance of the silence heard: Silero's windows (32 ms), the level's credit (≤ 96 ms), the gap's tick (40 ms). */
const SLACK_MS = 170;
/** A network stall inside speech: well past the runtime's gap threshold, and short of any end-of-turn wait. */
const STALL_MS = 3 * GAP_AFTER_MS;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  mistral.mode = { kind: 'stream', chunks: ['Je vous écoute.'] };
  // No recheck: each pause heard is then exactly one flush, which is what tells a filled stall from none.
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, STT_BUDGET_MS: '2000', STT_RECHECK_MS: '0' });
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

describe('a gap in the microphone audio (a client-side speech gate)', () => {
  // A hang-over of silence before the gate closes is filled the same way, from the end of the audio
  // heard (test/unit/audio-gaps.test.ts): the gate that cuts at the speech's very end is the case here.
  it('speech, then nothing: the turn is answered within the endpointing bounds', async () => {
    const phrase = 'Je voulais te dire que';
    const script = await speechScript([{ silenceMs: 400 }, phrase, { silenceMs: 0 }]);
    const offset = script.speech[0]!.startMs - PRE_ROLL_MS;
    const speech: SpeechSpan[] = script.speech.map((s) => ({ startMs: s.startMs - offset, endMs: s.endMs - offset, text: phrase }));
    voxtral.utterances.push({ text: phrase, speech });
    const kiosk = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    expect(await kiosk.start(true, 24_000, true)).toMatchObject({ audio: { voiceInput: true, gaps: true } });
    await kiosk.speak(script.pcm, 1);
    // When the speech's end was sent (the audio goes out in real time): the silence after it is the gap's.
    const speechEndSentAt = performance.now() - (script.durationMs - script.speech.at(-1)!.endMs);
    await kiosk.next((f) => f.type === 'vad' && f.state === 'speech_stopped', 0);
    // On the wall clock (the recognizer's bytes cannot tell: the early flush holds a pause's audio
    // back); the runtime's own lag can only add to it.
    const silenceMs = performance.now() - speechEndSentAt;
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe(phrase);
    expect(silenceMs).toBeGreaterThanOrEqual(settings.ENDPOINT_MIN_MS - SLACK_MS);
    expect(silenceMs).toBeLessThanOrEqual(settings.ENDPOINT_MAX_MS + SLACK_MS);
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    kiosk.close();
  }, 30_000);

  /**
   * Half the phrase, a stall (nothing sent for STALL_MS), then the rest late, then silence until the
   * runtime ends the utterance. Whether silence was put into the stall shows in the recognizer's
   * flushes: a pause heard inside the phrase gets an early flush of its own (STT_EARLY_FLUSH_MS), so
   * the utterance is flushed twice; audio that only came late is one stretch of speech, flushed once.
   */
  async function stalled(gate: boolean | undefined) {
    const phrase = 'Je voulais te dire que le jardin est en fleurs';
    const script = await speechScript([{ silenceMs: 400 }, phrase, { silenceMs: settings.ENDPOINT_MAX_MS + 500 }]);
    const offset = script.speech[0]!.startMs - PRE_ROLL_MS;
    voxtral.utterances.push({ text: phrase, speech: script.speech.map((s) => ({ startMs: s.startMs - offset, endMs: s.endMs - offset, text: phrase })) });
    const kiosk = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
    expect(await kiosk.start(true, 24_000, gate)).toMatchObject({ audio: { voiceInput: true, gaps: true } });
    const socketsBefore = voxtral.sockets.length;
    // Mid-phrase, on a frame's edge (inside a word, whichever it is).
    const split = Math.round((script.speech[0]!.startMs + script.speech[0]!.endMs) / 2 / 20) * 20 * 16;
    // The kiosk stops sending once the utterance has ended.
    const stop = () => kiosk.ofType('vad').some((f) => f.state === 'speech_stopped');
    await kiosk.speak(script.pcm.subarray(0, split), 1, stop);
    // The stall itself (the scenario, not a wait for something).
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    await kiosk.speak(script.pcm.subarray(split), 1, stop);
    const final = await kiosk.next('transcript.final', 0);
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    const flushes = voxtral.sockets[socketsBefore]!.flushes;
    voxtral.utterances.length = 0;
    return { kiosk, phrase, final, flushes };
  }

  it('a kiosk that declares no gate: a stall inside speech inserts no silence; one turn, the whole phrase', async () => {
    const { kiosk, phrase, final, flushes } = await stalled(undefined);
    expect(flushes).toBe(1);
    expect(final).toMatchObject({ turnId: 'v1', text: phrase });
    expect(kiosk.ofType('transcript.final')).toHaveLength(1);
    expect(kiosk.ofType('vad').map((f) => f.state)).toEqual(['speech_started', 'speech_stopped']);
    kiosk.close();
  }, 30_000);

  // `gate: false` negotiates no gate (test/unit/voice-protocol.test.ts); this case is the control
  // that shows the observable above tells a filled stall from none.
  it('gate: true hears the same stall as silence (the observable tells them apart)', async () => {
    const on = await stalled(true);
    // The filled stall is a pause inside the phrase: flushed early there, then at the end.
    expect(on.flushes).toBe(2);
    expect(on.final.text).toBe(on.phrase);
    on.kiosk.close();
  }, 30_000);
});

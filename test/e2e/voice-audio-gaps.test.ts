import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, type SpeechSpan } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { speechScript } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';

/**
 * A kiosk with a speech gate (session.ready `audio.gaps`) stops sending when the senior stops
 * speaking. Through a real socket, default end-of-turn settings, the listener's real detectors: the
 * audio ends with the speech (or a short hang-over), then nothing comes, and the turn is still
 * answered, after the silence the endpointing would have waited on a microphone that went on.
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
const settings: Config = loadConfig({});
/** The runtime's pre-roll: the recognizer's audio starts this long before the detected speech. */
const PRE_ROLL_MS = 300;
/** Tolerance of the silence heard: Silero's windows (32 ms), the level's credit (≤ 96 ms), the gap's tick (40 ms). */
const SLACK_MS = 170;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  mistral.mode = { kind: 'stream', chunks: ['Je vous écoute.'] };
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, STT_BUDGET_MS: '2000' });
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

describe('a gap in the microphone audio (a client-side speech gate)', () => {
  for (const hangOverMs of [0, 150]) {
    it(`speech, ${hangOverMs} ms of silence, then nothing: the turn is answered within the endpointing bounds`, async () => {
      const phrase = 'Je voulais te dire que';
      const script = await speechScript([{ silenceMs: 400 }, phrase, { silenceMs: hangOverMs }]);
      const offset = script.speech[0]!.startMs - PRE_ROLL_MS;
      const speech: SpeechSpan[] = script.speech.map((s) => ({ startMs: s.startMs - offset, endMs: s.endMs - offset, text: phrase }));
      voxtral.utterances.push({ text: phrase, speech });
      const kiosk = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
      expect(await kiosk.start(true, 24_000)).toMatchObject({ audio: { voiceInput: true, gaps: true } });
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
  }
});

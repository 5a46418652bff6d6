import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/config.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, type SpeechSpan } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { speechScript, type ScriptPart } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { PRE_ROLL_MS } from '../../machines/voice/voice.port.ts';

/**
 * How a turn ends, through a real kiosk socket with the default end-of-turn settings: real speech
 * (espeak-ng) streamed in real time, a Voxtral fake whose interim words come about half a second
 * behind the audio (as Voxtral realtime's target_streaming_delay_ms), the listener's Silero and
 * WebRTC detectors. Every bound is read from the settings.
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
const settings: Config = loadConfig({});
/** Tolerance of the measured silence: Silero's windows (32 ms), the level's credit (≤ 96 ms) and the ground truth's threshold. */
const SLACK_MS = 130;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, STT_BUDGET_MS: '2000' });
}, 60_000);

beforeEach(() => {
  voxtral.utterances.length = 0;
  mistral.mode = { kind: 'stream', chunks: ['Je vous écoute.'] };
});

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

/**
 * Speaks `parts` on a fresh voice kiosk in real time and scripts the recognizer with each phrase's
 * true place in its audio. Returns the kiosk, and how much silence the runtime heard after the
 * speech before it ended the utterance: the kiosk's audio sent after the speech when `speech_stopped`
 * came (the runtime's own lag can only add to it; the recognizer's bytes cannot tell, since the early
 * flush holds a pause's audio back).
 */
async function say(parts: ScriptPart[]): Promise<{ kiosk: VoiceKiosk; trailingSilenceMs: () => number; speechEndMs: number }> {
  const script = await speechScript(parts);
  const phrases = parts.filter((p): p is string => typeof p === 'string');
  // The recognizer's audio starts at the pre-roll before the speech: the phrases' times in it.
  const offset = script.speech[0]!.startMs - PRE_ROLL_MS;
  const speech: SpeechSpan[] = script.speech.map((s, i) => ({ startMs: s.startMs - offset, endMs: s.endMs - offset, text: phrases[i]! }));
  voxtral.utterances.push({ text: phrases.join(' '), speech });
  const kiosk = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  expect(await kiosk.start(true, 24_000)).toMatchObject({ audio: { voiceInput: true } });
  await kiosk.speak(script.pcm, 1);
  const speechEndMs = script.speech.at(-1)!.endMs;
  const trailingSilenceMs = () => kiosk.sentWhen(kiosk.ofType('vad').find((f) => f.state === 'speech_stopped')!) - speechEndMs;
  return { kiosk, trailingSilenceMs, speechEndMs };
}

describe('how a turn ends', () => {
  it('a sentence paused 1.5 s after « et » is not cut: one turn with the whole sentence', async () => {
    const { kiosk } = await say([{ silenceMs: 400 }, 'Je suis allée chez ma fille et', { silenceMs: 1500 }, 'nous avons mangé une tarte.', { silenceMs: settings.ENDPOINT_MAX_MS + 500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Je suis allée chez ma fille et nous avons mangé une tarte.');
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    expect(kiosk.ofType('transcript.final')).toHaveLength(1);
    expect(kiosk.frames.filter((f) => f.type === 'vad' && f.state === 'speech_stopped')).toHaveLength(1);
    kiosk.close();
  }, 30_000);

  it(`a finished « … ? » is answered after the short wait, well before ENDPOINT_SILENCE_MS (${settings.ENDPOINT_SILENCE_MS} ms)`, async () => {
    const { kiosk, trailingSilenceMs } = await say([{ silenceMs: 400 }, 'Est-ce que vous venez demain ?', { silenceMs: 2500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Est-ce que vous venez demain ?');
    const silence = trailingSilenceMs();
    // The short wait, once the recognizer has delivered « ? » (about half a second behind the audio).
    expect(silence).toBeGreaterThanOrEqual(settings.ENDPOINT_MIN_MS - SLACK_MS);
    expect(silence).toBeLessThan(settings.ENDPOINT_SILENCE_MS);
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    kiosk.close();
  }, 30_000);

  it(`an abandoned « je voulais te dire que » is answered within ENDPOINT_MAX_MS (${settings.ENDPOINT_MAX_MS} ms)`, async () => {
    const { kiosk, trailingSilenceMs } = await say([{ silenceMs: 400 }, 'Je voulais te dire que', { silenceMs: settings.ENDPOINT_MAX_MS + 1500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Je voulais te dire que');
    const silence = trailingSilenceMs();
    // The long wait of an unfinished ending, and never more than the maximum.
    expect(silence).toBeGreaterThanOrEqual(settings.ENDPOINT_UNFINISHED_MS - SLACK_MS);
    expect(silence).toBeLessThanOrEqual(settings.ENDPOINT_MAX_MS + SLACK_MS);
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    kiosk.close();
  }, 30_000);
});

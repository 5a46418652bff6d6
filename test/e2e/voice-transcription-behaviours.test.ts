import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { AudioClock } from '../support/audio-clock.ts';
import type { FakeMistral } from '../support/fake-mistral.ts';
import type { FakeVoxtral } from '../support/fake-voxtral.ts';
import type { Frame } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN, type TestRuntime } from '../support/runtime.ts';
import { startVoiceRuntime } from '../support/voice-runtime.ts';
import { SPEECH_SAMPLE_RATE, speechScript } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';

/**
 * A senior's turn through the real runtime at its default settings (early flush and recheck on), over a
 * real kiosk socket, real speech in real time, with the Voxtral fake holding back the last words of its
 * live text (`held-last-words`): the one case whose outcome hangs on a real pause's timing. What each
 * reported behaviour does to the text — a cumulative final, a later flush left unanswered, live text in
 * word fragments — is asserted on the transcriber itself in test/integration/voice-transcription-behaviours.test.ts.
 */

let voxtral: FakeVoxtral;
let rt: TestRuntime;
let stop: () => Promise<void>;
const settings = loadConfig({});
const REPLY = 'Je vous écoute.';
const clock = new AudioClock(SPEECH_SAMPLE_RATE);

beforeAll(async () => {
  // The default turn-taking settings, not the quick ones of tests about something else.
  const defaults = Object.fromEntries(['ENDPOINT_MIN_MS', 'ENDPOINT_SILENCE_MS', 'ENDPOINT_UNFINISHED_MS', 'ENDPOINT_MAX_MS', 'STT_BUDGET_MS'].map((name) => [name, String(settings[name as keyof typeof settings])]));
  let mistral: FakeMistral;
  ({ rt, voxtral, mistral, stop } = await startVoiceRuntime('transcription-behaviours', defaults));
  // The fake hears where the runtime's chunks lie in the kiosk's audio, as the service would.
  voxtral.clock = (_socket, pcm) => clock.heard(pcm);
  mistral.chatFirstByteMs = 300;
  mistral.mode = { kind: 'stream', chunks: [REPLY] };
}, 60_000);

beforeEach(() => {
  voxtral.behaviours.clear();
  voxtral.utterances.length = 0;
});

afterAll(() => stop?.());

async function voiceKiosk(): Promise<VoiceKiosk> {
  const kiosk = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  expect(await kiosk.start(true, 24_000)).toMatchObject({ audio: { voiceInput: true } });
  return kiosk;
}

/**
 * The senior says `phrase` (its true place in the audio scripted for the recognizer), then is silent long
 * enough for any end of turn; returns the turn's final transcript and its reply once its audio has played.
 */
async function say(kiosk: VoiceKiosk, phrase: string): Promise<{ final: Frame; reply: Frame; speechEndMs: number }> {
  const script = await speechScript([{ silenceMs: 400 }, phrase, { silenceMs: 3500 }]);
  voxtral.utterances.push({ text: phrase, speech: script.speech.map((s) => ({ ...s, text: phrase })) });
  clock.set(script.pcm);
  const from = kiosk.frames.length;
  // The microphone goes quiet once the reply is in: the rest of the silence would only be waited for.
  await kiosk.speak(script.pcm, 1, () => kiosk.frames.slice(from).some((f) => f.type === 'reply.done'));
  const reply = await kiosk.next((f) => f.type === 'reply.done', from);
  const final = kiosk.frames.slice(from).find((f) => f.type === 'transcript.final' && f.turnId === reply.turnId) ?? { type: 'none' };
  await kiosk.next((f) => f.type === 'reply.audio.end' && f.turnId === reply.turnId, from);
  kiosk.send({ type: 'playback.done', turnId: reply.turnId });
  return { final, reply, speechEndMs: script.speech.at(-1)!.endMs };
}

describe('held-last-words', () => {
  it('the live text lacks the last words, the early flush brings them: the sentence is whole, and ends at its closing mark, not after the unfinished wait', async () => {
    voxtral.behaviours.add('held-last-words');
    const kiosk = await voiceKiosk();
    const phrase = 'Je voudrais prendre rendez-vous chez le médecin demain.';
    const { final, reply, speechEndMs } = await say(kiosk, phrase);
    expect(reply.flux).toBe('agent');
    expect(final.text).toBe(phrase);
    // The live text stopped at « le », an unfinished ending; only the early flush's text had the last words.
    const deltas = kiosk.ofType('transcript.delta').map((f) => String(f.text));
    expect(deltas).toContain('Je voudrais prendre rendez-vous chez le');
    expect(deltas.filter((d) => d.includes('médecin')).every((d) => d === phrase)).toBe(true);
    // Ended on the flushed text's closing mark: well before the wait an unfinished « le » would have had.
    const stopped = kiosk.ofType('vad').find((f) => f.state === 'speech_stopped')!;
    expect(kiosk.sentWhen(stopped) - speechEndMs).toBeLessThan(settings.ENDPOINT_SILENCE_MS);
    kiosk.close();
  }, 60_000);
});

it('the defaults it is tested at: the flush answer bound leaves the budget room for the end’s answer', () => {
  expect(settings.STT_FLUSH_ANSWER_MS).toBeLessThan(settings.STT_BUDGET_MS / 2);
  expect(settings.STT_EARLY_FLUSH_MS).toBeGreaterThan(0);
});

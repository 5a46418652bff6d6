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
 * A senior's turns through the real runtime at its default settings (early flush and recheck on), over a
 * real kiosk socket, real speech in real time, with the Voxtral fake playing the service's reported
 * behaviours: each utterance with speech is answered (never the SOS line), and a turn's transcript is its
 * utterance alone, never a repetition of the turn before.
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

async function workarounds(): Promise<Record<string, number>> {
  const metric = await rt.metrics.registry.getSingleMetric('kohami_stt_workarounds_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.event), v.value]));
}

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
  await kiosk.speak(script.pcm, 1);
  const reply = await kiosk.next((f) => f.type === 'reply.done', from);
  const final = kiosk.frames.slice(from).find((f) => f.type === 'transcript.final' && f.turnId === reply.turnId) ?? { type: 'none' };
  await kiosk.next((f) => f.type === 'reply.audio.end' && f.turnId === reply.turnId, from);
  kiosk.send({ type: 'playback.done', turnId: reply.turnId });
  return { final, reply, speechEndMs: script.speech.at(-1)!.endMs };
}

const FIRST = 'Bonjour, je suis allée au marché ce matin.';
const SECOND = 'Est-ce qu’il va pleuvoir demain ?';

/** Two utterances on one kiosk: each answered by the agent, each transcript its own utterance. */
async function twoTurns(): Promise<void> {
  const kiosk = await voiceKiosk();
  const first = await say(kiosk, FIRST);
  const second = await say(kiosk, SECOND);
  expect([first.reply.flux, second.reply.flux]).toEqual(['agent', 'agent']);
  expect([first.final.text, second.final.text]).toEqual([FIRST, SECOND]);
  expect(kiosk.ofType('reply.done').filter((f) => f.flux === 'sos')).toEqual([]);
  // The turns the conversation holds: each utterance once.
  const { turns } = rt.registry.list().find((s) => s.link !== null)!.actor.getSnapshot().context;
  expect(turns.slice(-2).map((t) => t.transcript)).toEqual([FIRST, SECOND]);
  kiosk.close();
}

describe('cumulative-final', () => {
  it('each turn’s transcript is its utterance alone, though the service repeats the first in the second’s final', async () => {
    voxtral.behaviours.add('cumulative-final');
    const before = (await workarounds()).cumulative_final ?? 0;
    const sockets = voxtral.sockets.length;
    await twoTurns();
    // One socket heard both: its second final held the first utterance too.
    expect(voxtral.sockets.length - sockets).toBe(1);
    expect((await workarounds()).cumulative_final ?? 0).toBeGreaterThan(before);
  }, 60_000);
});

describe('flush-unanswered-after-first', () => {
  it('the second utterance’s unanswered flush ends its socket, whose end brings the text: answered, and not the first again', async () => {
    voxtral.behaviours.add('flush-unanswered-after-first');
    const before = (await workarounds()).flush_unanswered ?? 0;
    const sockets = voxtral.sockets.length;
    await twoTurns();
    expect(voxtral.sockets[sockets]!.ends).toBe(1);
    expect((await workarounds()).flush_unanswered ?? 0).toBeGreaterThan(before);
  }, 60_000);
});

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

describe('fragments', () => {
  it('live text in word fragments: the turn ends on the whole sentence, answered', async () => {
    voxtral.behaviours.add('fragments');
    const kiosk = await voiceKiosk();
    const phrase = 'Nous partirons ensemble demain matin vers Lyon.';
    const { final, reply } = await say(kiosk, phrase);
    expect([reply.flux, final.text]).toEqual(['agent', phrase]);
    // What the kiosk was shown ends on whole words (« de » of « demain » was never a word of it).
    for (const delta of kiosk.ofType('transcript.delta')) expect(phrase.startsWith(String(delta.text))).toBe(true);
    expect(kiosk.ofType('transcript.delta').map((f) => f.text)).not.toContain('Nous partirons ensemble de');
    kiosk.close();
  }, 60_000);
});

it('the defaults it is tested at: the flush answer bound leaves the budget room for the end’s answer', () => {
  expect(settings.STT_FLUSH_ANSWER_MS).toBeLessThan(settings.STT_BUDGET_MS / 2);
  expect(settings.STT_EARLY_FLUSH_MS).toBeGreaterThan(0);
});

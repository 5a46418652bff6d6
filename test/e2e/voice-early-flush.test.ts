import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { AudioClock } from '../support/audio-clock.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral, type SpeechSpan } from '../support/fake-voxtral.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { SPEECH_SAMPLE_RATE, speechScript, type ScriptPart } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { PRE_ROLL_MS } from '../../machines/voice/voice.port.ts';

/**
 * The early flush, through a real kiosk socket at the default settings: real speech (espeak-ng) in
 * real time, the Voxtral fake streaming its words half a second behind the audio and answering each
 * flush with what was said in the audio it received (it finds the runtime's chunks in the kiosk's
 * audio; the rest stays for the next one, as the service does). A short
 * way into each pause the runtime asks for the final text of what was said so far, decides on it,
 * and — if the senior goes on — joins the next segment's text to it. The end of turn's own case end to
 * end is here too (a finished sentence ends after the short wait); every rule of the decision — the
 * unfinished ending's wait, the maximum, the recheck — is on the turn-taking machine's simulated clock
 * (test/unit/turn-taking.machine.test.ts).
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
const settings = loadConfig({});
const REPLY = 'Je vous écoute.';
/** Tolerance of the measured silence: Silero's windows (32 ms), the level's credit (≤ 96 ms) and the ground truth's threshold. */
const SLACK_MS = 130;
const clock = new AudioClock(SPEECH_SAMPLE_RATE);

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  voxtral.clock = (_socket, pcm) => clock.heard(pcm);
  mistral = await new FakeMistral(voxtral).start();
  // A realistic model: the first token 300 ms after the request.
  mistral.chatFirstByteMs = 300;
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
}, 60_000);

beforeEach(() => {
  voxtral.utterances.length = 0;
  mistral.mode = { kind: 'stream', chunks: [REPLY] };
});

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

/**
 * Scripts the recognizer with each phrase's true place in the audio, then speaks `parts` on a new voice
 * kiosk. `speechEndMs` is in the recognizer's audio, `kioskSpeechEndMs` in the kiosk's.
 */
async function say(parts: ScriptPart[]): Promise<{ kiosk: VoiceKiosk; socket: number; speechEndMs: number; kioskSpeechEndMs: number }> {
  const script = await speechScript(parts);
  const phrases = parts.filter((p): p is string => typeof p === 'string');
  // In the kiosk's audio: the fake hears where the runtime's chunks lie in it.
  const speech: SpeechSpan[] = script.speech.map((s, i) => ({ startMs: s.startMs, endMs: s.endMs, text: phrases[i]! }));
  voxtral.utterances.push({ text: phrases.join(' '), speech });
  clock.set(script.pcm);
  const kiosk = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  expect(await kiosk.start(true, 24_000)).toMatchObject({ audio: { voiceInput: true } });
  const socket = voxtral.sockets.length;
  // The microphone goes quiet once the turn is answered: the rest of the silence would only be waited for.
  const from = kiosk.frames.length;
  await kiosk.speak(script.pcm, 1, () => kiosk.frames.slice(from).some((f) => f.type === 'reply.done'));
  const kioskSpeechEndMs = script.speech.at(-1)!.endMs;
  return { kiosk, socket, speechEndMs: kioskSpeechEndMs - (script.speech[0]!.startMs - PRE_ROLL_MS), kioskSpeechEndMs };
}

async function earlyFlushes(): Promise<Record<string, number>> {
  const metric = await rt.metrics.registry.getSingleMetric('kohami_stt_early_flushes_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}
const grew = (after: Record<string, number>, before: Record<string, number>, key: string) => (after[key] ?? 0) - (before[key] ?? 0);

describe('the early flush', () => {
  it(`a finished sentence: one flush, early in the pause; the turn ends on its text after the short wait, well before ENDPOINT_SILENCE_MS (${settings.ENDPOINT_SILENCE_MS} ms), with no second flush`, async () => {
    const before = await earlyFlushes();
    const { kiosk, socket, speechEndMs, kioskSpeechEndMs } = await say([{ silenceMs: 400 }, 'Est-ce que le marché est ouvert demain ?', { silenceMs: 2500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Est-ce que le marché est ouvert demain ?');
    // The short wait once the recognizer has the closing « ? » (about half a second behind the audio): the
    // kiosk's audio sent after the speech when the runtime ended it (its own lag can only add to it).
    const silence = kiosk.sentWhen(kiosk.ofType('vad').find((f) => f.state === 'speech_stopped')!) - kioskSpeechEndMs;
    expect(silence).toBeGreaterThanOrEqual(settings.ENDPOINT_MIN_MS - SLACK_MS);
    expect(silence).toBeLessThan(settings.ENDPOINT_SILENCE_MS);
    expect(await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0)).toMatchObject({ text: REPLY, flux: 'agent' });
    expect(voxtral.sockets[socket]!.flushes).toBe(1);
    const after = await earlyFlushes();
    expect(grew(after, before, 'turn')).toBe(1);
    expect(grew(after, before, 'resumed')).toBe(0);
    // The recognizer heard the speech and the pause up to the flush: the rest was held back.
    // Counted in audio, not in time: the same on a loaded machine.
    expect(voxtral.sockets[socket]!.audioBytes / 32 - speechEndMs).toBeLessThan(settings.STT_EARLY_FLUSH_MS + SLACK_MS);
    kiosk.close();
  }, 30_000);

  it('the senior goes on after a pause with no cue: the next segment is joined — one turn, the whole sentence, captions of the whole', async () => {
    const before = await earlyFlushes();
    const { kiosk, socket } = await say([{ silenceMs: 400 }, 'Je suis allée voir ma cousine Jeanne', { silenceMs: 1200 }, 'à la gare de Lyon hier.', { silenceMs: 2500 }]);
    const final = await kiosk.next('transcript.final', 0);
    expect(final.text).toBe('Je suis allée voir ma cousine Jeanne à la gare de Lyon hier.');
    await kiosk.next((f) => f.type === 'reply.done' && f.turnId === final.turnId, 0);
    expect(kiosk.ofType('transcript.final')).toHaveLength(1);
    expect(kiosk.frames.filter((f) => f.type === 'vad' && f.state === 'speech_stopped')).toHaveLength(1);
    // The pause the senior went on after: its flush, and — its text did not close — the recheck; then the one the turn ended on.
    expect(voxtral.sockets[socket]!.flushes).toBe(3);
    const after = await earlyFlushes();
    expect(grew(after, before, 'rechecked')).toBe(1);
    expect(grew(after, before, 'resumed')).toBe(1);
    expect(grew(after, before, 'turn')).toBe(1);
    // The captions of the second segment carry the first.
    const deltas = kiosk.ofType('transcript.delta').map((f) => f.text as string);
    expect(deltas.at(-1)).toBe(final.text);
    expect(deltas.filter((d) => d.includes('gare')).every((d) => d.startsWith('Je suis allée voir ma cousine Jeanne '))).toBe(true);
    const context = rt.registry.list().find((s) => s.link !== null)!.actor.getSnapshot().context;
    expect(context.window.filter((m) => m.role === 'user').map((m) => m.content)).toContain(final.text);
    expect(context.window.some((m) => m.content === 'Je suis allée voir ma cousine Jeanne')).toBe(false);
    kiosk.close();
  }, 30_000);
});

it('the defaults it is tested at', () => {
  expect(settings.STT_EARLY_FLUSH_MS).toBeGreaterThan(0);
  expect(settings.STT_EARLY_FLUSH_MS).toBeLessThan(settings.ENDPOINT_MIN_MS);
  expect(settings.STT_RECHECK_MS).toBeGreaterThan(settings.STT_EARLY_FLUSH_MS + 50);
});

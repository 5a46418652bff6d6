import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readWav } from '@kohami/kiosk-client/node';
import { DEFAULT_TAIL_MS, runVoiceFile } from '../../runtime/cli/voice-file-kiosk.ts';
import { loadConfig } from '../../runtime/config.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { fakeSpeechDurationMs, FakeVoxtral } from '../support/fake-voxtral.ts';
import type { Frame } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { concat, frenchSpeech, silence, writeWav } from '../support/speech.ts';
import { VoiceKiosk } from '../support/voice-kiosk.ts';
import { QUICK_ENDPOINT } from '../support/endpointing.ts';

/**
 * Issue 21, item 4: speech over a reply that brings no word (a cough, the television, a chair)
 * pauses the reply and resumes it where it stopped; words still cut it at once; backchannels play
 * on. Through a real socket, on the real runtime, with the fake Voxtral: a "noise burst" is audio
 * the detectors hear as speech (espeak-ng's French) for which the fake recognizer gives no word.
 */

const OUTPUT_RATE = 24_000;
const ENV = { MISTRAL_API_KEY: 'test-key', ...QUICK_ENDPOINT, STT_BUDGET_MS: '1500' };
/** The settings the runtime runs with (defaults but for the above): FALSE_INTERRUPTION_MS is the default. */
const settings = loadConfig(ENV);
/** About 12 s of fake speech (60 ms a character): still playing through every noise below. */
const LONG_REPLY = [
  'Le marché du samedi est un vrai plaisir. ',
  'On y trouve des fruits, des fromages et des fleurs de saison. ',
  'Votre fille a dû aimer cette promenade avec vous. ',
  'Vous pourrez y retourner ensemble la semaine prochaine.',
];
const FULL_REPLY = LONG_REPLY.join('').trim();

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
/** Speech for the detectors, long past FALSE_INTERRUPTION_MS; scripted with no word, it is a noise burst. */
let noise: Int16Array;
/** « Parle-moi du marché. » */
let question: Int16Array;
let dir: string;

const withSilence = (pcm: Int16Array) => concat([silence(200), pcm, silence(1000)]);
const session = () => rt.registry.list()[0]!;
const counted = async (outcome: string) =>
  Number(new RegExp(`outcome="${outcome}"} (\\d+)`).exec(await rt.metrics.registry.getSingleMetricAsString('kohami_barge_in_total'))?.[1] ?? 0);

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  rt = await startTestRuntime({}, { ...ENV, MISTRAL_BASE_URL: mistral.baseUrl });
  // Words over a reply and backchannels are voice.test.ts's (barge-in) and the turn-taking machine's unit tests'.
  noise = await frenchSpeech('Je me demande bien ce que nous allons manger ce soir avec toute la famille et puis demain aussi.').then(withSilence);
  question = await frenchSpeech('Parle-moi du marché.');
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-false-interruption-'));
  // The noise's speech (without the silence around it) lasts well past the bound: the pause is not a matter of milliseconds.
  expect(noise.length / 16 - 1200).toBeGreaterThan(settings.FALSE_INTERRUPTION_MS + 2000);
}, 60_000);

beforeEach(() => {
  voxtral.utterances.length = 0;
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

/** A voice kiosk whose typed turn's long reply is playing, its first sentence reported played. */
async function replyPlaying(turnId: string): Promise<{ k: VoiceKiosk; playedMs: number }> {
  mistral.mode = { kind: 'stream', chunks: LONG_REPLY };
  const k = await VoiceKiosk.connect(rt.wsUrl, KIOSK_TOKEN);
  expect(await k.start(true, OUTPUT_RATE)).toMatchObject({ mode: 'voice', audio: { voiceInput: true } });
  k.send({ type: 'turn', turnId, transcript: 'Parle-moi du marché' });
  const mark = await k.next((f) => f.type === 'reply.audio.mark' && f.turnId === turnId, 0);
  const playedMs = Math.ceil(((mark.sampleOffset as number) * 1000) / OUTPUT_RATE) + 10;
  k.send({ type: 'playback.progress', turnId, playedMs });
  return { k, playedMs };
}

const indexOf = (k: VoiceKiosk, match: (f: Frame) => boolean) => k.frames.findIndex(match);

describe('false interruptions: speech over a reply that brings no word', () => {
  it('a noise burst pauses the reply, which resumes where it stopped: the whole reply is delivered and kept, not interrupted', async () => {
    const turnId = 'noise-1';
    const { k, playedMs } = await replyPlaying(turnId);
    const before = await counted('false_interruption');
    voxtral.utterances.push({ text: '' });
    const speaking = k.speak(noise);
    expect(await k.next('reply.audio.pause', 15_000)).toEqual({ type: 'reply.audio.pause', turnId });
    // The kiosk stopped its speaker at once: what it reports while paused does not move.
    k.send({ type: 'playback.progress', turnId, playedMs });
    expect(await k.next('reply.audio.resume', 15_000)).toEqual({ type: 'reply.audio.resume', turnId });
    await speaking;

    // Paused while the noise went on, resumed once it ended with no word.
    const started = indexOf(k, (f) => f.type === 'vad' && f.state === 'speech_started');
    const paused = indexOf(k, (f) => f.type === 'reply.audio.pause');
    const stopped = indexOf(k, (f) => f.type === 'vad' && f.state === 'speech_stopped');
    const resumed = indexOf(k, (f) => f.type === 'reply.audio.resume');
    expect(started).toBeGreaterThan(-1);
    expect([started < paused, paused < stopped, stopped < resumed]).toEqual([true, true, true]);

    // Every sample of the reply reached the kiosk, contiguous, and nothing was cleared.
    const end = await k.next((f) => f.type === 'reply.audio.end' && f.turnId === turnId, 0);
    let offset = 0;
    for (const frame of k.audio.filter((a) => a.turnId === turnId)) {
      expect(frame.sampleOffset).toBe(offset);
      offset += frame.pcm.length;
    }
    expect(end.durationMs).toBe(Math.round((offset * 1000) / OUTPUT_RATE));
    expect(k.ofType('reply.audio.mark', turnId).at(-1)).toMatchObject({ sampleOffset: offset, textOffset: FULL_REPLY.length });
    k.send({ type: 'playback.done', turnId });
    expect(k.ofType('reply.audio.clear')).toEqual([]);
    expect(k.ofType('transcript.final')).toEqual([]);
    // Neither the pause nor its length set off a bound of the reply: it ended as the agent's, whole.
    expect(k.ofType('reply.done', turnId)).toEqual([expect.objectContaining({ flux: 'agent', text: FULL_REPLY })]);
    expect(k.ofType('reply.done').filter((f) => f.flux !== 'agent')).toEqual([]);

    // The conversation keeps the whole reply, not flagged interrupted; the noise is no turn.
    await expect.poll(() => rt.registry.views()[0]!.voice.state).toBe('listening');
    const { window, turns } = session().actor.getSnapshot().context;
    expect(window.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: FULL_REPLY }]);
    expect(turns.map((t) => ({ turnId: t.turnId, reply: t.reply, interrupted: t.interrupted }))).toEqual([{ turnId, reply: FULL_REPLY, interrupted: false }]);
    expect(await counted('false_interruption')).toBe(before + 1);
    k.close();
  }, 45_000);
  // Words that come only after the pause cut the paused reply as a barge-in: the turn-taking machine's
  // « late real words cut the paused reply » on its clock; what the kiosk meets of a cut (the clear, the
  // window keeping what was heard) is voice.test.ts's barge-in.
});

describe('npm run kiosk -- --voice with a false interruption', () => {
  it('prints the pause and the resume, and writes the whole reply', async () => {
    // Speech as fast as it plays, so the reply is still being sent when the noise comes over it.
    voxtral.speechDeltaIntervalMs = 100;
    try {
      mistral.mode = { kind: 'stream', chunks: LONG_REPLY };
      voxtral.utterances.push({ text: 'Parle-moi du marché' }, { text: '' });
      const wav = path.join(dir, 'question-then-noise.wav');
      const out = path.join(dir, 'reply.wav');
      await writeWav(wav, concat([silence(200), question, silence(1500), noise]));
      let printed = '';
      await runVoiceFile({ url: rt.wsUrl, token: KIOSK_TOKEN, wav, out, tailMs: DEFAULT_TAIL_MS, settleMs: 30_000, write: (text) => void (printed += text) });
      const lines = printed.split('\n');
      const at = (line: string) => lines.findIndex((l) => l.includes(line));
      expect(at('vous> Parle-moi du marché')).toBeGreaterThan(-1);
      expect(at('[audio v1 paused]')).toBeGreaterThan(at('vous> Parle-moi du marché'));
      expect(at('[audio v1 resumed]')).toBeGreaterThan(at('[audio v1 paused]'));
      expect(at('[audio v1 ')).toBe(at('[audio v1 paused]'));
      expect(lines.find((l) => /^\[audio v1 \d+ ms\]$/.test(l))).toBeDefined();
      expect(printed).not.toContain('cleared');
      expect(printed).not.toContain('unfinished');
      // The WAV holds the whole reply: the fake's 60 ms a character, every sentence.
      const reply = readWav(new Uint8Array(await readFile(out)), 24_000);
      const expectedMs = LONG_REPLY.reduce((ms, p) => ms + fakeSpeechDurationMs(p.trim()), 0);
      // (What the file kiosk printed goes with a failure: its turns, pauses and audio ends say where the difference came from.)
      expect(Math.abs((reply.samples.length * 1000) / 24_000 - expectedMs), printed).toBeLessThan(50);
    } finally {
      voxtral.speechDeltaIntervalMs = 0;
    }
  }, 60_000);
});

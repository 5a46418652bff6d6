import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MistralTranscriber } from '../../adapters/voice/mistral-transcriber.ts';
import type { EndedUtterance, TurnTakingEvent } from '../../machines/voice/turn-taking.types.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { createMetrics } from '../../runtime/metrics.ts';
import { Transcription } from '../../runtime/voice/transcription.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { chunks, frenchSpeech } from '../support/speech.ts';

/**
 * The voice session's transcription (runtime/voice/transcription.ts) on the real Voxtral adapter and
 * the fake service: what the turn-taking machine asks of it — an early flush, the senior going on, the
 * end of the utterance — and what it answers, without a listener or a kiosk in between.
 */

const BUDGET_MS = 2_000;
let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let speech: Int16Array;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  speech = await frenchSpeech('Une baleine');
}, 60_000);

afterAll(async () => {
  await mistral?.stop();
  await voxtral?.stop();
});

beforeEach(() => {
  voxtral.utterances.length = 0;
  voxtral.transcriptionLatencyMs = 0;
});

/** A transcription as a voice session makes it; what it tells the machine and the kiosk, and what it ends with. */
function transcription(settings: { earlyFlushMs: number } = { earlyFlushMs: 150 }) {
  const closed = new AbortController();
  const told: TurnTakingEvent[] = [];
  const frames: ServerFrame[] = [];
  const ended: Array<{ transcript: string } | { late: boolean }> = [];
  /** Each utterance's end resolves when its final transcript (or its failure) is told, in order. */
  const settles: Array<() => void> = [];
  const transcriber = new MistralTranscriber({ apiKey: 'test-key', baseUrl: mistral.baseUrl, env: 'test', flushTimeoutMs: BUDGET_MS, logger: pino({ level: 'silent' }) });
  const t = new Transcription({
    transcriber,
    names: Promise.resolve([]),
    settings: { sttBudgetMs: BUDGET_MS, recheckMs: 400, preRollMs: 300, maxUtteranceMs: 30_000, endOfTurnMaxMs: 3_000, ...settings },
    signal: closed.signal,
    metrics: createMetrics(),
    log: pino({ level: 'silent' }),
    link: { send: (frame: ServerFrame) => void frames.push(frame) },
    tell: (event) => void told.push(event),
    final: (_u, transcript) => {
      ended.push({ transcript });
      settles.shift()?.();
    },
    failed: (_u, _err, _at, late) => {
      ended.push({ late });
      settles.shift()?.();
    },
  });
  const end = (id: number) => {
    const done = new Promise<void>((resolve) => settles.push(resolve));
    const utterance: EndedUtterance = { id, speechMs: 800, endpointingMs: 0, speculation: null, resumed: false };
    t.finish(utterance, performance.now());
    return done;
  };
  const say = (pcm: Int16Array) => {
    for (const chunk of chunks(pcm, 20)) t.append(chunk);
  };
  return { t, told, frames, ended, end, say, close: () => (closed.abort(), t.drop()) };
}

const flushedTexts = (told: TurnTakingEvent[]) => told.flatMap((e) => (e.type === 'FLUSHED' ? [e.text] : []));

describe('the transcription of one utterance', () => {
  it('an early flush, the senior going on, the end: the flushed segment leads the next, one flush at a time', async () => {
    voxtral.utterances.push({ text: 'Une baleine' }, { text: 'la lettre U.' });
    const s = transcription();
    s.t.start(1);
    s.say(speech);
    expect(s.t.flush(1, true)).toBe(true);
    // One flush at a time: a second while the first is in flight is refused, for the machine to ask again.
    expect(s.t.flush(1, false)).toBe(false);
    await expect.poll(() => flushedTexts(s.told)).toEqual(['Une baleine']);
    expect(s.frames).toContainEqual({ type: 'transcript.delta', text: 'Une baleine' });
    // The senior goes on: the held pause audio goes ahead of the next segment, whose words follow the first's.
    s.t.resume(1);
    s.say(speech);
    await s.end(1);
    expect(s.ended).toEqual([{ transcript: 'Une baleine la lettre U.' }]);
    s.close();
  }, 30_000);

  it('flushed early and nothing said since: the segments are the transcript, with no second flush', async () => {
    voxtral.utterances.push({ text: 'Une baleine.' });
    const s = transcription();
    s.t.start(1);
    s.say(speech);
    s.t.flush(1, true);
    await expect.poll(() => flushedTexts(s.told)).toEqual(['Une baleine.']);
    const flushes = voxtral.sockets.reduce((n, socket) => n + socket.flushes, 0);
    await s.end(1);
    expect(s.ended).toEqual([{ transcript: 'Une baleine.' }]);
    expect(voxtral.sockets.reduce((n, socket) => n + socket.flushes, 0)).toBe(flushes);
    s.close();
  }, 30_000);

  it('an early flush that fails is the utterance’s failure, told to the machine at once and at the end', async () => {
    voxtral.utterances.push({ text: 'Une baleine', fault: 'error' });
    const s = transcription();
    s.t.start(1);
    s.say(speech);
    s.t.flush(1, true);
    await expect.poll(() => s.told.some((e) => e.type === 'FLUSH.FAILED')).toBe(true);
    // No flush after a failure: the turn cannot be whole.
    expect(s.t.flush(1, true)).toBe(false);
    await s.end(1);
    expect(s.ended).toEqual([{ late: false }]);
    s.close();
  }, 30_000);

  it('an utterance that ends while the one before awaits its final answers after it: the finals come in order', async () => {
    voxtral.utterances.push({ text: 'Bonjour.' }, { text: 'Au revoir.' });
    voxtral.transcriptionLatencyMs = 300;
    const s = transcription({ earlyFlushMs: 0 });
    const before = voxtral.sockets.reduce((n, socket) => n + socket.flushes, 0);
    const flushes = () => voxtral.sockets.reduce((n, socket) => n + socket.flushes, 0) - before;
    s.t.start(1);
    s.say(speech);
    const first = s.end(1);
    // The next speech comes once the first's flush is out (a turn's end is a pause of at least ENDPOINT_MIN_MS),
    // and ends while its answer is still awaited.
    await expect.poll(flushes).toBe(1);
    s.t.start(2);
    s.say(speech);
    const second = s.end(2);
    await Promise.all([first, second]);
    expect(flushes()).toBe(2);
    expect(s.ended).toEqual([{ transcript: 'Bonjour.' }, { transcript: 'Au revoir.' }]);
    s.close();
  }, 30_000);
});

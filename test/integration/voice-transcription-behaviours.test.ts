import { RealtimeTranscriptionError$inboundSchema } from '@mistralai/mistralai/models/components';
import { once } from 'node:events';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { flushAnswerMsFor, MistralTranscriber, SETUP_GRACE_MS, type MistralTranscriberOptions, type TranscriptionServiceEvent } from '../../adapters/voice/mistral-transcriber.ts';
import type { TranscriptionStream } from '../../machines/voice/voice.port.ts';
import { expectContractViolations } from '../support/contract-violations.ts';
import { isUndocumentedSetting } from '../support/fake-voxtral.ts';
import { REFUSED_INPUT_CODE } from '../support/mistral-contract.ts';
import { relayedVoxtral } from '../support/relayed-voxtral.ts';
import { toneFrames } from '../support/speech.ts';
import type { TcpRelay } from '../support/tcp-relay.ts';

/**
 * The realtime transcriber against the Voxtral fake in each of the service's reported behaviours
 * (test/support/service-behaviours.ts), over real sockets: one `describe` per behaviour. Timers are
 * simulated only where the timers under test decide (the flush's answer bound, the idle close, the
 * Retry-After wait); sockets and the fake run for real.
 */

const { voxtral, relay: relayed } = relayedVoxtral();
let relay: TcpRelay;
let events: TranscriptionServiceEvent[];
let logged: string[];
const streams: TranscriptionStream[] = [];

beforeEach(() => {
  // The opt-in settings break the SDK's schema on purpose (STT_LANGUAGE, STT_CONTEXT_BIAS): any other break still fails a test.
  expectContractViolations(isUndocumentedSetting);
  relay = relayed();
  voxtral.behaviours.clear();
  voxtral.utterances.length = 0;
  voxtral.sockets.length = 0;
  voxtral.refused = 0;
  voxtral.transcriptionLatencyMs = 0;
  relay.webSocketOpenedAt.length = 0;
  events = [];
  logged = [];
});
afterEach(() => {
  vi.useRealTimers();
  for (const stream of streams.splice(0)) stream.close();
});

function transcriber(extra: Partial<MistralTranscriberOptions> = {}): MistralTranscriber {
  return new MistralTranscriber({
    apiKey: 'test-key',
    baseUrl: relay.url,
    env: 'test',
    backoffMs: 10,
    flushTimeoutMs: 2000,
    onServiceEvent: (event) => events.push(event),
    logger: pino({ level: 'debug' }, { write: (line: string) => void logged.push(line) }),
    ...extra,
  });
}

async function open(t: MistralTranscriber, names: string[] = []): Promise<TranscriptionStream> {
  const stream = await t.open({ contextBias: names, signal: new AbortController().signal });
  streams.push(stream);
  return stream;
}

const speak = (stream: TranscriptionStream, ms: number) => {
  for (const frame of toneFrames(ms)) stream.append(frame);
};
const flush = (stream: TranscriptionStream) => stream.flush(new AbortController().signal);

/**
 * Lets sockets and promises run until `check` holds (at most 10 s of wall-clock time); under simulated
 * timers, the ones already due run too (the fake answers after `setTimeout(0)`), but the clock does not move.
 */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) {
    if (vi.isFakeTimers()) vi.advanceTimersByTime(0);
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(check()).toBe(true);
}

/** Lets the sockets carry what is in flight (a few network round trips), without moving a simulated clock. */
async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Resolves with the flush's outcome once it settles (for asserting it has not settled yet). */
function watch<T>(promise: Promise<T>): { settled: boolean; promise: Promise<T> } {
  const w = { settled: false, promise };
  promise.then(
    () => (w.settled = true),
    () => (w.settled = true),
  );
  return w;
}

/** Under simulated timers: what settles once the sockets have carried it (and the timers already due have run). */
async function settled<T>(promise: Promise<T>): Promise<T> {
  const w = watch(promise);
  await until(() => w.settled);
  return w.promise;
}

const DOCUMENTED = { audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 } };
/** STT_FLUSH_ANSWER_MS as the runtime derives it from the flush bound these transcribers get. */
const flushAnswerMs = () => flushAnswerMsFor(2000);

describe('the conforming service (no behaviour)', () => {
  it('is set up with the documented fields alone, and answers each flush with its utterance', async () => {
    voxtral.utterances.push({ text: 'Bonjour Marie' }, { text: 'Il fait beau' });
    const stream = await open(transcriber(), ['Marie']);
    speak(stream, 600);
    await expect(flush(stream)).resolves.toBe('Bonjour Marie');
    speak(stream, 600);
    await expect(flush(stream)).resolves.toBe('Il fait beau');
    expect(voxtral.sockets.map((s) => s.updates)).toEqual([[DOCUMENTED]]);
    expect(events).toEqual([]);
  });

  it('refuses a session.update with a field the SDK’s payload lacks, with an error event the SDK parses', async () => {
    const broken = expectContractViolations();
    const socket = new WebSocket(`${voxtral.baseUrl}/audio/transcriptions/realtime?model=m`, { headers: { authorization: 'Bearer k' } });
    const received: unknown[] = [];
    socket.on('message', (data) => received.push(JSON.parse(String(data))));
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'session.update', session: { ...DOCUMENTED, language: 'fr' } }));
    await until(() => received.some((m) => (m as { type: string }).type === 'error'));
    const error = received.find((m) => (m as { type: string }).type === 'error');
    expect(RealtimeTranscriptionError$inboundSchema.parse(error)).toMatchObject({ error: { message: 'session.language: Extra inputs are not permitted', code: REFUSED_INPUT_CODE } });
    expect(voxtral.sockets.at(-1)!.refusedUpdates).toBe(1);
    expect(broken.map((v) => `${v.endpoint} ${v.path.join('.')}`)).toEqual(['realtime session.update session.language']);
    socket.close();
  });

  it('with STT_LANGUAGE and STT_CONTEXT_BIAS on, the refused set-up falls back to the documented fields once for the process: warned, counted, and no senior loses their voice', async () => {
    expectContractViolations(isUndocumentedSetting);
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Je suis Lucien' });
    const t = transcriber({ language: 'fr', contextBias: true });
    const first = await open(t, ['Marie']);
    speak(first, 400);
    await expect(flush(first)).resolves.toBe('Bonjour');
    // Another session of the same process: straight to the documented fields.
    const second = await open(t, ['Lucien']);
    speak(second, 400);
    await expect(flush(second)).resolves.toBe('Je suis Lucien');
    expect(voxtral.sockets.map((s) => s.updates)).toEqual([[{ ...DOCUMENTED, language: 'fr', context_bias: ['Marie'] }], [DOCUMENTED], [DOCUMENTED]]);
    expect(voxtral.sockets.map((s) => s.refusedUpdates)).toEqual([1, 0, 0]);
    expect(events).toEqual(['setup_fallback']);
    const warnings = logged.map((line) => JSON.parse(line) as { level: number; msg: string; fields?: string[] }).filter((l) => l.level === 40);
    expect(warnings).toEqual([expect.objectContaining({ fields: ['language', 'context_bias'], msg: expect.stringContaining('documented ones alone') })]);
    // Names never reach the log.
    expect(logged.join('\n')).not.toMatch(/Marie|Lucien/);
  });
});

describe('accepts-undocumented-fields', () => {
  it('language and names are sent when turned on, and again to a socket that replaces a dropped one', async () => {
    expectContractViolations(isUndocumentedSetting);
    voxtral.behaviours.add('accepts-undocumented-fields');
    voxtral.utterances.push({ text: 'perdu', fault: 'drop' }, { text: 'Bonjour Mathilde' });
    const stream = await open(transcriber({ language: 'fr', contextBias: true }), ['Mathilde', ' Mathilde ', 'Lucien', '']);
    speak(stream, 600);
    await expect(flush(stream)).resolves.toBe('Bonjour Mathilde');
    const update = { ...DOCUMENTED, language: 'fr', context_bias: ['Mathilde', 'Lucien'] };
    expect(voxtral.sockets.map((s) => s.updates)).toEqual([[update], [update]]);
    expect(events).toEqual([]);
  });
});

describe('cumulative-final', () => {
  it('each flush’s text is its utterance alone: what follows the socket’s earlier finals', async () => {
    voxtral.behaviours.add('cumulative-final');
    voxtral.utterances.push({ text: 'Bonjour je vais bien' }, { text: 'Il fait beau aujourd’hui' }, { text: 'Mon petit-fils vient dimanche' });
    const stream = await open(transcriber());
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) {
      speak(stream, 1500);
      texts.push(await flush(stream));
    }
    expect(texts).toEqual(['Bonjour je vais bien', 'Il fait beau aujourd’hui', 'Mon petit-fils vient dimanche']);
    expect(voxtral.sockets).toHaveLength(1);
    expect(events).toEqual(['cumulative_final', 'cumulative_final']);
  });

  it('an empty flush in between, and a final the service revised: still each utterance alone', async () => {
    voxtral.behaviours.add('cumulative-final');
    voxtral.utterances.push({ text: 'Je suis allée au marché ce matin' }, { text: 'avec ma fille Claire', finalText: 'Avec ma fille, Claire.' });
    const stream = await open(transcriber());
    speak(stream, 2500);
    await expect(flush(stream)).resolves.toBe('Je suis allée au marché ce matin');
    await expect(flush(stream)).resolves.toBe('');
    speak(stream, 1500);
    await expect(flush(stream)).resolves.toBe('Avec ma fille, Claire.');
  });
});

describe('held-last-words', () => {
  it('the last two words never come as live text; the flush’s answer has the whole sentence', async () => {
    voxtral.behaviours.add('held-last-words');
    voxtral.utterances.push({ text: 'Je voudrais aller au marché demain matin' });
    const stream = await open(transcriber());
    const live: string[] = [];
    stream.onDelta((text) => live.push(text));
    speak(stream, 3500);
    await until(() => live.at(-1) === 'Je voudrais aller au marché');
    await expect(flush(stream)).resolves.toBe('Je voudrais aller au marché demain matin');
    expect(live.some((text) => text.includes('demain'))).toBe(false);
  });
});

describe('fragments', () => {
  it('live text is read up to its last whole word once the service is seen cutting words: « de » of « demain » is never handed on as a word', async () => {
    voxtral.behaviours.add('fragments');
    voxtral.streamingDelayMs = 0;
    const words = ['Nous', 'partirons', 'ensemble', 'demain', 'matin', 'vers', 'Lyon'];
    voxtral.utterances.push({ text: words.join(' ') });
    const t = transcriber();
    const stream = await open(t);
    const live: string[] = [];
    stream.onDelta((text) => live.push(text));
    speak(stream, 4000);
    // The last word may still be a piece: it is read once the final comes.
    await until(() => live.at(-1) === words.slice(0, -1).join(' '));
    await expect(flush(stream)).resolves.toBe(words.join(' '));
    voxtral.streamingDelayMs = 480;
    // The fake cut its words in two (« pa » + « rtirons », « de » + « main »); the first piece, before any
    // was seen continuing a word, is told as it came; from then on each text ends on a whole word.
    expect(voxtral.sockets[0]!.interims.map((i) => i.text)).toEqual(['Nous', 'pa', 'rtirons', 'en', 'semble', 'de', 'main', 'ma', 'tin', 'vers', 'Lyon']);
    expect(live.slice(2)).toEqual(['Nous', 'Nous partirons', 'Nous partirons ensemble', 'Nous partirons ensemble demain', 'Nous partirons ensemble demain matin', 'Nous partirons ensemble demain matin vers']);
    // The next stream of the process knows it from its first piece.
    voxtral.utterances.push({ text: 'Demain matin' });
    const next = await open(t);
    const nextLive: string[] = [];
    next.onDelta((text) => nextLive.push(text));
    speak(next, 1500);
    await expect(flush(next)).resolves.toBe('Demain matin');
    expect(nextLive.every((text) => ['', 'Demain'].includes(text))).toBe(true);
  });
});

describe('flush-unanswered-after-first', () => {
  it('a later flush left unanswered ends its socket at STT_FLUSH_ANSWER_MS: the end’s answer is that utterance alone, and the next goes on a fresh socket', async () => {
    voxtral.behaviours.add('flush-unanswered-after-first');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Je suis fatiguée' }, { text: 'Et vous' });
    const answerMs = flushAnswerMs();
    const stream = await open(transcriber());
    speak(stream, 400);
    await expect(flush(stream)).resolves.toBe('Bonjour');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    speak(stream, 400);
    const second = watch(flush(stream));
    await until(() => voxtral.sockets[0]!.flushes === 2);
    vi.advanceTimersByTime(answerMs - 1);
    await settle();
    expect(second.settled).toBe(false);
    expect(voxtral.sockets[0]!.ends).toBe(0);
    vi.advanceTimersByTime(1);
    await until(() => second.settled);
    await expect(second.promise).resolves.toBe('Je suis fatiguée');
    expect(voxtral.sockets[0]!.ends).toBe(1);
    await until(() => voxtral.sockets[0]!.closed);
    // The next utterance: a fresh socket, whose first flush is answered.
    speak(stream, 400);
    const third = watch(flush(stream));
    await until(() => third.settled);
    await expect(third.promise).resolves.toBe('Et vous');
    expect(voxtral.sockets[1]!.flushes).toBe(1);
    expect(events).toEqual(['flush_unanswered']);
  });

  it('audio spoken while a flush waits for its answer is not in the end’s answer: it goes, whole, on the fresh socket', async () => {
    voxtral.behaviours.add('flush-unanswered-after-first');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Je suis fatiguée' }, { text: 'Et vous' });
    const stream = await open(transcriber());
    speak(stream, 400);
    await expect(flush(stream)).resolves.toBe('Bonjour');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    speak(stream, 400);
    const second = flush(stream);
    await until(() => voxtral.sockets[0]!.flushes === 2);
    const sentBefore = voxtral.sockets[0]!.audioBytes;
    // The senior goes on at once: held back from the socket that owes the flush.
    speak(stream, 300);
    await settle();
    expect(voxtral.sockets[0]!.audioBytes).toBe(sentBefore);
    vi.advanceTimersByTime(flushAnswerMs());
    await until(() => voxtral.sockets.length === 2 && voxtral.sockets[1]!.audioBytes === 300 * 32);
    await expect(settled(second)).resolves.toBe('Je suis fatiguée');
    speak(stream, 100);
    const third = watch(flush(stream));
    await until(() => third.settled);
    await expect(third.promise).resolves.toBe('Et vous');
    expect(voxtral.sockets[1]!.audioBytes).toBe(400 * 32);
  });
});

describe('flush-unanswered', () => {
  it('no flush is ever answered: each utterance is answered by its socket’s end at STT_FLUSH_ANSWER_MS, none repeats another; the next socket is opened as one ends', async () => {
    voxtral.behaviours.add('flush-unanswered');
    voxtral.utterances.push({ text: 'Bonjour Marie' }, { text: 'Quel temps fait-il' });
    const stream = await open(transcriber());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const texts: string[] = [];
    for (let i = 0; i < 2; i++) {
      speak(stream, 400);
      const flushed = watch(flush(stream));
      await until(() => voxtral.sockets.length > i && voxtral.sockets[i]!.flushes === 1);
      await settle();
      // Flushed, not ended: the mode is STT_FLUSH_MODE's, whatever the service did before.
      expect(voxtral.sockets[i]!.ends).toBe(0);
      vi.advanceTimersByTime(flushAnswerMs());
      texts.push(await settled(flushed.promise));
      await until(() => voxtral.sockets.length === i + 2);
    }
    expect(texts).toEqual(['Bonjour Marie', 'Quel temps fait-il']);
    expect(voxtral.sockets.slice(0, 2).map((s) => s.ends)).toEqual([1, 1]);
    expect(events).toEqual(['flush_unanswered', 'flush_unanswered']);
  });

  it('STT_FLUSH_MODE=end: the first utterance already ends its socket, and the next is opened for the speech to come', async () => {
    voxtral.behaviours.add('flush-unanswered');
    voxtral.utterances.push({ text: 'Bonjour Marie' }, { text: 'Quel temps fait-il' });
    const stream = await open(transcriber({ flushMode: 'end' }));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    for (const [i, text] of ['Bonjour Marie', 'Quel temps fait-il'].entries()) {
      speak(stream, 400);
      await expect(settled(flush(stream))).resolves.toBe(text);
      expect(voxtral.sockets[i]).toMatchObject({ flushes: 1, ends: 1 });
      await until(() => voxtral.sockets.length === i + 2);
    }
    expect(events).toEqual([]);
  });

  it('a socket that answers neither its flush nor its end: the utterance is replayed on a fresh socket, flushed and ended at once, whose answer is taken', async () => {
    voxtral.behaviours.add('flush-unanswered');
    // The first socket is stuck on the utterance; the fresh one hears it again.
    voxtral.utterances.push({ text: 'Bonjour Marie', fault: 'hang' }, { text: 'Bonjour Marie' });
    const stream = await open(transcriber());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    speak(stream, 400);
    const flushed = watch(flush(stream));
    await until(() => voxtral.sockets[0]!.flushes === 1);
    vi.advanceTimersByTime(flushAnswerMs());
    await until(() => voxtral.sockets[0]!.ends === 1);
    vi.advanceTimersByTime(flushAnswerMs());
    // The fresh socket at once: the stuck one was ended by the stream, not lost, so no back-off.
    await until(() => voxtral.sockets.length === 2 && voxtral.sockets[1]!.ends === 1);
    expect(voxtral.sockets[1]!).toMatchObject({ audioBytes: 400 * 32, flushes: 1 });
    await until(() => flushed.settled);
    await expect(flushed.promise).resolves.toBe('Bonjour Marie');
    // Every utterance now ends its socket: a third is opened for the speech to come.
    expect(voxtral.sockets.slice(0, 2).map((s) => s.ends)).toEqual([1, 1]);
    // The stuck socket is given up once the text came from the other.
    await until(() => voxtral.sockets[0]!.closed);
    expect(events).toEqual(['flush_unanswered', 'flush_replayed']);
  });
});

describe('late-flush', () => {
  it('answers 1.5 s late: the socket is ended at STT_FLUSH_ANSWER_MS, whose answer is the utterance; the next utterance gets its own text', async () => {
    voxtral.behaviours.add('late-flush');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Il pleut' });
    const stream = await open(transcriber());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    speak(stream, 400);
    const first = watch(flush(stream));
    await until(() => voxtral.sockets[0]!.flushes === 1);
    vi.advanceTimersByTime(flushAnswerMs());
    await until(() => first.settled);
    await expect(first.promise).resolves.toBe('Bonjour');
    speak(stream, 400);
    const second = watch(flush(stream));
    await until(() => voxtral.sockets.length === 2 && voxtral.sockets[1]!.flushes === 1);
    // The first socket's late answer never comes to be taken for this one: it was closed with its end.
    vi.advanceTimersByTime(flushAnswerMs());
    await until(() => second.settled);
    await expect(second.promise).resolves.toBe('Il pleut');
  });

  it('with an answer bound above the lateness, the late answer is taken, and the next utterance’s answer is its own', async () => {
    voxtral.behaviours.add('late-flush');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Il pleut' });
    const stream = await open(transcriber({ flushTimeoutMs: 4000, flushAnswerMs: 1800 }));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    for (const text of ['Bonjour', 'Il pleut']) {
      speak(stream, 400);
      const flushed = watch(flush(stream));
      await until(() => voxtral.sockets[0]!.flushes === (text === 'Bonjour' ? 1 : 2));
      vi.advanceTimersByTime(voxtral.lateFlushMs - 1);
      await settle();
      expect(flushed.settled).toBe(false);
      vi.advanceTimersByTime(1);
      await until(() => flushed.settled);
      await expect(flushed.promise).resolves.toBe(text);
    }
    expect(voxtral.sockets).toHaveLength(1);
    expect(voxtral.sockets[0]!.ends).toBe(0);
  });

  it('given up by its budget before the late answer: the socket goes with it, and the next utterance is not answered with it', async () => {
    voxtral.behaviours.add('late-flush');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Il pleut' });
    const stream = await open(transcriber({ flushTimeoutMs: 4000, flushAnswerMs: 1800 }));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    speak(stream, 400);
    const budget = new AbortController();
    const first = stream.flush(budget.signal);
    await until(() => voxtral.sockets[0]!.flushes === 1);
    budget.abort(new Error('STT_BUDGET_MS'));
    await expect(first).rejects.toThrow('STT_BUDGET_MS');
    await until(() => voxtral.sockets[0]!.closed);
    speak(stream, 400);
    const second = watch(flush(stream));
    await until(() => voxtral.sockets.length === 2 && voxtral.sockets[1]!.flushes === 1);
    vi.advanceTimersByTime(voxtral.lateFlushMs);
    await until(() => second.settled);
    await expect(second.promise).resolves.toBe('Il pleut');
  });
});

describe('idle-error', () => {
  // The idle bounds are the timers under test: simulated from the socket's opening, with the clock they read.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });

  it('an idle socket is closed at STT_IDLE_CLOSE_MS, before the service’s idle error; the next speech reaches a fresh socket whole', async () => {
    voxtral.behaviours.add('idle-error');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Me revoilà' });
    const stream = await settled(open(transcriber({ idleCloseMs: 20_000 })));
    speak(stream, 400);
    await expect(settled(flush(stream))).resolves.toBe('Bonjour');
    vi.advanceTimersByTime(19_999);
    await settle();
    expect(voxtral.sockets[0]!.closed).toBe(false);
    vi.advanceTimersByTime(1);
    await until(() => voxtral.sockets[0]!.closed);
    // Closed by the runtime, not by the service's error (which would have counted as service_closed).
    expect(events).toEqual([]);
    expect(voxtral.sockets).toHaveLength(1);
    // The senior speaks (the pre-roll first): a fresh socket carries all of it.
    speak(stream, 700);
    await expect(settled(flush(stream))).resolves.toBe('Me revoilà');
    expect(voxtral.sockets).toHaveLength(2);
    expect(voxtral.sockets[1]!.audioBytes).toBe(700 * 32);
  });

  it('the service’s idle error arriving anyway costs nothing: the socket is closed quietly and the next utterance is heard', async () => {
    voxtral.behaviours.add('idle-error');
    voxtral.utterances.push({ text: 'Bonjour' }, { text: 'Me revoilà' });
    const stream = await settled(open(transcriber({ idleCloseMs: 60_000 })));
    speak(stream, 400);
    await expect(settled(flush(stream))).resolves.toBe('Bonjour');
    vi.advanceTimersByTime(voxtral.idleErrorMs);
    await until(() => voxtral.sockets[0]!.closed && events.length === 1);
    expect(events).toEqual(['service_closed']);
    speak(stream, 400);
    await expect(settled(flush(stream))).resolves.toBe('Me revoilà');
    expect(voxtral.sockets).toHaveLength(2);
  });
});

describe('no-session-updated', () => {
  it('the set-up goes ahead SETUP_GRACE_MS after its update with no error, rather than failing every connect', async () => {
    voxtral.behaviours.add('no-session-updated');
    voxtral.utterances.push({ text: 'Bonjour' });
    const started = performance.now();
    const stream = await open(transcriber());
    expect(performance.now() - started).toBeGreaterThanOrEqual(SETUP_GRACE_MS - 1);
    speak(stream, 400);
    await expect(flush(stream)).resolves.toBe('Bonjour');
    expect(events).toEqual(['no_session_updated']);
  });

  it('an undocumented field refused by a service that never acknowledges: the same fallback, once', async () => {
    expectContractViolations(isUndocumentedSetting);
    voxtral.behaviours.add('no-session-updated');
    voxtral.utterances.push({ text: 'Bonjour' });
    const stream = await open(transcriber({ language: 'fr' }));
    speak(stream, 400);
    await expect(flush(stream)).resolves.toBe('Bonjour');
    expect(voxtral.sockets.map((s) => s.updates)).toEqual([[{ ...DOCUMENTED, language: 'fr' }], [DOCUMENTED]]);
    expect(events).toEqual(['setup_fallback', 'no_session_updated']);
  });
});

describe('rate-limited', () => {
  it('an upgrade answered 429 with Retry-After: 1 is dialled again after that second, not before', async () => {
    voxtral.behaviours.add('rate-limited');
    voxtral.utterances.push({ text: 'Bonjour' });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const opening = watch(open(transcriber()));
    await until(() => voxtral.refused === 1);
    await settle();
    vi.advanceTimersByTime(999);
    await settle();
    expect(relay.webSocketOpenedAt).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await until(() => opening.settled);
    const stream = await opening.promise;
    expect(relay.webSocketOpenedAt).toHaveLength(2);
    speak(stream, 400);
    const flushed = watch(flush(stream));
    await until(() => flushed.settled);
    await expect(flushed.promise).resolves.toBe('Bonjour');
    expect(events).toEqual(['rate_limited']);
  });

  it('the wait is bounded by the flush’s own bound', async () => {
    voxtral.behaviours.add('rate-limited');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const opening = watch(open(transcriber({ flushTimeoutMs: 300 })));
    await until(() => voxtral.refused === 1);
    await settle();
    vi.advanceTimersByTime(300);
    await until(() => opening.settled);
    await opening.promise;
    expect(relay.webSocketOpenedAt).toHaveLength(2);
  });
});

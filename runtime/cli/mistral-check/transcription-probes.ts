import { AudioEncoding } from '@mistralai/mistralai/extra/realtime';
import { mistralSdkServerUrl } from '../../../adapters/mistral/base-url.ts';
import { VOXTRAL_STREAMING_DELAY_MS } from '../../../adapters/voice/mistral-transcriber.ts';
import { sessionUpdateMessage } from '../../../adapters/voice/realtime-socket.ts';
import { INPUT_SAMPLE_RATE } from '../../../machines/voice/voice.port.ts';
import type { Config } from '../../config.ts';
import { honouringRetryAfter, messageOf, type CheckContext } from './context.ts';
import { describeError, ProbeSocket, rawOf, schemaFailure, textOf, unknownEvent, type DocumentedSession, type SetupOutcome, type TimedEvent } from './probe-socket.ts';
import { formatMs, type RowId } from './report.ts';

/** A phrase of speech for the transcription probes: 16 kHz mono s16. */
export interface ProbePhrase {
  pcm: Int16Array;
  /** What is said, when known (recordings, espeak-ng): shown beside what was heard. */
  text?: string;
}

/** A flush answered later than this, alone, misses the finished-sentence target (first audio 1 s after the end of speech). */
export const SLOW_FLUSH_MS = 1_000;
/** After each phrase, silence past the streaming delay, so every word said has had time to come as live text. */
const TAIL_MARGIN_MS = 500;
/** The flush on silence: this much digital silence. */
const SILENCE_MS = 1_000;
/** STT_IDLE_CLOSE_MS's floor (runtime/config.ts): the advice never goes under it. */
const IDLE_CLOSE_MIN_MS = 1_000;
/** What a senior's socket would favour: their preferred name and a contact's. */
const PROBE_CONTEXT_BIAS = ['Marie', 'Claire'];
/** The rows the main socket's phrases fill. */
const PHRASE_ROWS: RowId[] = ['flush-answered', 'flush-time', 'final', 'live-words', 'last-words', 'end'];

/** The runtime's documented `session.update` settings: the audio format, and `target_streaming_delay_ms` when STT_STREAMING_DELAY_MS is set. */
export function runtimeSession(config: Config): DocumentedSession {
  return {
    audioFormat: { encoding: AudioEncoding.PcmS16le, sampleRate: INPUT_SAMPLE_RATE },
    ...(config.STT_STREAMING_DELAY_MS !== undefined ? { targetStreamingDelayMs: config.STT_STREAMING_DELAY_MS } : {}),
  };
}

/** Every socket the probes opened: each is closed at the end of the run, and its events read for the schema row. */
export class Sockets {
  readonly all: ProbeSocket[] = [];

  async open(ctx: CheckContext): Promise<ProbeSocket> {
    const serverUrl = mistralSdkServerUrl(ctx.config.MISTRAL_BASE_URL, ctx.config.KOHAMI_ENV);
    const socket = await honouringRetryAfter(ctx, 'the transcription socket', () => ProbeSocket.open(serverUrl, ctx.apiKey, ctx.config.MISTRAL_STT_MODEL, ctx.bounds.connectMs, ctx.signal));
    this.all.push(socket);
    return socket;
  }

  closeAll(): void {
    for (const socket of this.all) socket.close();
  }

  get audioSeconds(): number {
    return this.all.reduce((sum, s) => sum + s.audioSeconds, 0);
  }
}

/** What one phrase and its flush gave. */
interface Heard {
  /** Deltas received before the flush was sent. */
  live: string[];
  /** Deltas received after it, before its answer. */
  released: string[];
  /** The flush's final text; undefined when unanswered. */
  final?: string;
  /** An error event answered the flush. */
  error?: string;
  answeredMs?: number;
}

/**
 * The main socket: set-up with exactly the runtime's `session.update`, then each phrase streamed
 * at its pace with a tail of silence and flushed, then `input_audio.end`. Then a flush on silence,
 * on a socket of its own: after the phrases, so a service (or a fake) answering in order hears them first.
 */
export async function transcriptionProbes(ctx: CheckContext, sockets: Sockets, phrases: ProbePhrase[]): Promise<void> {
  await phraseProbes(ctx, sockets, phrases);
  await silenceProbe(ctx, sockets);
}

async function phraseProbes(ctx: CheckContext, sockets: Sockets, phrases: ProbePhrase[]): Promise<void> {
  const { report } = ctx;
  let socket: ProbeSocket;
  try {
    socket = await sockets.open(ctx);
  } catch (err) {
    report.set('setup', 'break', `no socket: ${messageOf(err)}`);
    return notMeasured(ctx, PHRASE_ROWS, 'no socket');
  }
  const session = runtimeSession(ctx.config);
  const setup = await socket.configure(session, {}, ctx.bounds.setupMs, ctx.signal);
  setupRow(ctx, session, setup);
  if (setup.kind === 'refused') return notMeasured(ctx, PHRASE_ROWS, 'set-up refused');
  const tailMs = (ctx.config.STT_STREAMING_DELAY_MS ?? VOXTRAL_STREAMING_DELAY_MS) + TAIL_MARGIN_MS;
  const heard: Heard[] = [];
  for (const phrase of phrases) heard.push(await hear(ctx, socket, withSilence(phrase.pcm, tailMs)));
  await endRow(ctx, socket);
  flushRows(ctx, heard);
  finalRow(ctx, heard, phrases);
  liveWordsRow(ctx, heard);
  lastWordsRow(ctx, heard, tailMs);
}

/** Each undocumented field alone beside the documented ones, on a socket of its own (no audio); the configured value when set. */
export async function fieldProbes(ctx: CheckContext, sockets: Sockets): Promise<void> {
  const { config } = ctx;
  await fieldProbe(ctx, sockets, { row: 'language', field: 'language', value: config.STT_LANGUAGE ?? 'fr', setting: 'STT_LANGUAGE', on: config.STT_LANGUAGE ?? 'fr', set: config.STT_LANGUAGE !== undefined });
  await fieldProbe(ctx, sockets, { row: 'context-bias', field: 'context_bias', value: PROBE_CONTEXT_BIAS, setting: 'STT_CONTEXT_BIAS', on: 'on', set: config.STT_CONTEXT_BIAS === 'on' });
}

/**
 * A socket set up as the runtime's, then left without audio for `idleMs` (by default a second past
 * STT_IDLE_CLOSE_MS): does the service end an idle socket before the runtime closes it itself?
 */
export async function idleProbe(ctx: CheckContext, sockets: Sockets): Promise<void> {
  const { idleMs } = ctx.bounds;
  const closeMs = ctx.config.STT_IDLE_CLOSE_MS;
  if (idleMs === 0) return ctx.report.set('idle', 'note', 'not probed (--idle-s 0)');
  const socket = await setUp(ctx, sockets, 'idle');
  if (!socket) return;
  const openedAt = performance.now();
  const ended = await socket.waitFor((e) => e.type === 'error', idleMs, ctx.signal);
  const afterMs = performance.now() - openedAt;
  const after = `${(afterMs / 1000).toFixed(1)} s without audio`;
  const runtime = `the runtime closes its own after ${formatMs(closeMs)} (STT_IDLE_CLOSE_MS)`;
  if (ended !== 'timeout') {
    if (afterMs > closeMs) return ctx.report.set('idle', 'ok', `ended by the service after ${after}; ${runtime}, before`);
    ctx.report.advise('STT_IDLE_CLOSE_MS', String(Math.max(IDLE_CLOSE_MIN_MS, Math.floor((afterMs * 2) / 3 / 1000) * 1000)), `the service ends an idle socket after ${after}`);
    return ctx.report.set('idle', 'note', `${ended === 'closed' ? 'closed' : `error «${describeError(ended.event)}»`} after ${after}, before ${runtime}`);
  }
  if (afterMs >= closeMs) return ctx.report.set('idle', 'ok', `still open after ${after}; ${runtime}`);
  ctx.report.set('idle', 'note', `still open after ${after}: too short a wait to say (${runtime})`);
}

/** Every socket's events against the SDK's schemas: a message the SDK cannot read is one the runtime never sees. */
export function eventsRow(ctx: CheckContext, sockets: Sockets): void {
  const events = sockets.all.flatMap((s) => s.events.map((e) => e.event));
  const received = events.filter((e) => !(rawOf(e) instanceof Error));
  const failures = received.map(schemaFailure).filter((f): f is string => f !== undefined);
  const unknown = [...new Set(received.filter((e) => unknownEvent(e) && !unknownEvent(e)!.error).map((e) => e.type))];
  if (failures.length > 0) return ctx.report.set('events', 'break', `${failures.length} of ${received.length} failed: ${failures.slice(0, 3).join('; ')}`);
  if (unknown.length > 0) return ctx.report.set('events', 'note', `${received.length} events; types the SDK does not know (the runtime ignores them): ${unknown.join(', ')}`);
  ctx.report.set('events', 'ok', `${received.length} events on ${sockets.all.length} sockets, all read`);
}

function setupRow(ctx: CheckContext, session: DocumentedSession, setup: SetupOutcome): void {
  const wire = (JSON.parse(sessionUpdateMessage(session, {})) as { session: Record<string, unknown> }).session;
  const sent = `{${Object.entries(wire).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')}}`;
  if (setup.kind === 'refused') return ctx.report.set('setup', 'break', `${sent} refused: ${setup.message}`);
  if (setup.kind === 'silent') {
    return ctx.report.set('setup', 'note', `${sent} accepted, never acknowledged (no session.updated within ${formatMs(ctx.bounds.setupMs)}): the runtime must not wait for it`);
  }
  ctx.report.set('setup', 'ok', `${sent} accepted, session.updated in ${formatMs(setup.ms)}`);
}

/** A socket set up with the runtime's session; null (and `row` says why) when it could not be. */
async function setUp(ctx: CheckContext, sockets: Sockets, row: RowId): Promise<ProbeSocket | null> {
  try {
    const socket = await sockets.open(ctx);
    const setup = await socket.configure(runtimeSession(ctx.config), {}, ctx.bounds.setupMs, ctx.signal);
    if (setup.kind !== 'refused') return socket;
    ctx.report.set(row, 'note', `not measured: set-up refused (${setup.message})`);
  } catch (err) {
    ctx.report.set(row, 'note', `not measured: no socket (${messageOf(err)})`);
  }
  return null;
}

interface FieldProbe {
  row: RowId;
  field: string;
  value: unknown;
  /** The setting that sends the field, the value that turns it on, and whether it is set now. */
  setting: string;
  on: string;
  set: boolean;
}

async function fieldProbe(ctx: CheckContext, sockets: Sockets, probe: FieldProbe): Promise<void> {
  const { row, field, value, setting } = probe;
  let socket: ProbeSocket;
  try {
    socket = await sockets.open(ctx);
  } catch (err) {
    return ctx.report.set(row, 'note', `not measured: no socket (${messageOf(err)})`);
  }
  const outcome = await socket.configure(runtimeSession(ctx.config), { [field]: value }, ctx.bounds.setupMs, ctx.signal);
  socket.close();
  if (outcome.kind === 'refused') {
    ctx.report.advise(setting, null, `the service refuses \`${field}\``);
    // Set, the runtime's first set-up in each process is refused, then made again without it.
    if (probe.set) return ctx.report.set(row, 'note', `refused (${outcome.message}), and ${setting} is set: each process's first set-up is refused, then goes on without it`);
    return ctx.report.set(row, 'ok', `refused, as documented: ${outcome.message}`);
  }
  const how = outcome.kind === 'acknowledged' ? (field in outcome.echoed ? 'echoed in session.updated' : 'not echoed in session.updated: it may be ignored') : 'no error, never acknowledged';
  ctx.report.advise(setting, probe.on, `the service accepts \`${field}\``);
  ctx.report.set(row, 'note', `${field}: ${JSON.stringify(value)} accepted (${how})`);
}

async function silenceProbe(ctx: CheckContext, sockets: Sockets): Promise<void> {
  const socket = await setUp(ctx, sockets, 'silence');
  if (!socket) return;
  const heard = await hear(ctx, socket, new Int16Array((INPUT_SAMPLE_RATE * SILENCE_MS) / 1000));
  socket.close();
  if (heard.error) return ctx.report.set('silence', 'note', `answered with an error: ${heard.error}`);
  if (heard.final === undefined) return ctx.report.set('silence', 'note', `not answered within ${formatMs(ctx.bounds.flushMs)}`);
  if (heard.final.trim() === '') return ctx.report.set('silence', 'ok', `answered in ${formatMs(heard.answeredMs!)}, no text`);
  ctx.report.set('silence', 'note', `answered in ${formatMs(heard.answeredMs!)} with «${heard.final.trim()}»: words heard in silence`);
}

/** Streams `pcm`, flushes, and waits for the flush's answer within the bound. */
async function hear(ctx: CheckContext, socket: ProbeSocket, pcm: Int16Array): Promise<Heard> {
  const from = socket.mark;
  await socket.stream(pcm, ctx.signal);
  const flushedAt = performance.now();
  // An answer that came while the audio went (a late answer to an earlier flush) is not this flush's.
  const atFlush = socket.mark;
  socket.seek(atFlush);
  // A socket the service closed takes no flush: its answer is the close, read below.
  await socket.flush().catch(() => undefined);
  const answer = await socket.waitFor((e) => e.type === 'transcription.done' || e.type === 'error', ctx.bounds.flushMs, ctx.signal);
  const answeredAt = typeof answer === 'string' ? socket.mark : socket.events.indexOf(answer);
  const deltas = (start: number, end: number) => socket.events.slice(start, end).filter(isDelta).map((e) => textOf(e.event));
  const heard: Heard = { live: deltas(from, atFlush), released: deltas(atFlush, answeredAt) };
  if (answer === 'closed') heard.error = 'the socket closed';
  if (typeof answer === 'string') return heard;
  heard.answeredMs = answer.at - flushedAt;
  if (answer.event.type === 'error') heard.error = describeError(answer.event);
  else heard.final = textOf(answer.event);
  return heard;
}

async function endRow(ctx: CheckContext, socket: ProbeSocket): Promise<void> {
  const sentAt = performance.now();
  const from = socket.mark;
  await socket.end();
  socket.seek(from);
  const final = await socket.waitFor((e) => e.type === 'transcription.done', ctx.bounds.endMs, ctx.signal);
  const closed = socket.isClosed || (await socket.waitFor(() => false, Math.max(0, sentAt + ctx.bounds.endMs - performance.now()), ctx.signal)) === 'closed';
  const withFinal = typeof final === 'string' ? 'without a final' : `with a final «${textOf(final.event).trim()}»`;
  if (closed) return ctx.report.set('end', 'ok', `closed in ${formatMs(performance.now() - sentAt)}, ${withFinal}`);
  ctx.report.set('end', 'note', `still open ${formatMs(ctx.bounds.endMs)} after it, ${withFinal}: the runtime closes the socket itself`);
}

function flushRows(ctx: CheckContext, heard: Heard[]): void {
  const errors = heard.filter((h) => h.error !== undefined);
  const answered = heard.filter((h) => h.final !== undefined);
  const n = heard.length;
  if (errors.length > 0) ctx.report.set('flush-answered', 'break', `${errors.length} of ${n} answered with an error: ${errors[0]!.error}`);
  else if (answered.length === n) ctx.report.set('flush-answered', 'ok', `${n} of ${n} answered`);
  else if (answered.length === 0) ctx.report.set('flush-answered', 'break', `none of ${n} answered within ${formatMs(ctx.bounds.flushMs)}: every utterance must end its socket instead`);
  else {
    const missing = heard.map((h, i) => (h.final === undefined ? ordinal(i) : null)).filter(Boolean);
    ctx.report.set('flush-answered', 'note', `the ${missing.join(' and ')} not answered within ${formatMs(ctx.bounds.flushMs)} (${answered.length} of ${n} answered): the runtime ends the socket, and every utterance's since`);
  }
  const times = heard.filter((h) => h.answeredMs !== undefined).map((h) => h.answeredMs!);
  adviseFlushMode(ctx, errors.length === 0 && answered.length < n, times);
  if (times.length === 0) return ctx.report.set('flush-time', 'note', 'not measured: no flush answered');
  const shown = times.map(formatMs).join(', ');
  const slowest = Math.max(...times);
  const budget = ctx.config.STT_BUDGET_MS;
  if (slowest > budget) return ctx.report.set('flush-time', 'break', `${shown}: past STT_BUDGET_MS (${formatMs(budget)}), the runtime gives up on the utterance and speaks the SOS line`);
  if (slowest > SLOW_FLUSH_MS) return ctx.report.set('flush-time', 'note', `${shown}: over ${formatMs(SLOW_FLUSH_MS)}, the answer to a finished sentence waits on it`);
  ctx.report.set('flush-time', 'ok', shown);
}

/**
 * A flush unanswered, or answered after STT_FLUSH_ANSWER_MS, would cost the first utterance that wait before
 * the runtime switches to ending every utterance's socket: the report says to start there.
 */
function adviseFlushMode(ctx: CheckContext, unanswered: boolean, times: number[]): void {
  const bound = ctx.config.STT_FLUSH_ANSWER_MS;
  const late = times.filter((t) => t > bound);
  if (!unanswered && late.length === 0) return;
  const why = unanswered ? 'flushes go unanswered' : `flushes are answered after STT_FLUSH_ANSWER_MS (${formatMs(bound)})`;
  ctx.report.advise('STT_FLUSH_MODE', 'end', `${why}: each utterance ends its socket, answered in one round trip`);
}

function finalRow(ctx: CheckContext, heard: Heard[], phrases: ProbePhrase[]): void {
  const finals = heard.map((h) => h.final?.trim());
  const said = phrases.map((p, i) => `«${finals[i] ?? '(no final)'}»${p.text ? ` for «${p.text}»` : ''}`).join(', then ');
  if (finals.length < 2 || finals.some((f) => !f)) return ctx.report.set('final', 'note', `not measured: two finals with text needed (${said})`);
  if (repeats(words(finals[1]!), words(finals[0]!))) {
    return ctx.report.set('final', 'note', `cumulative: the 2nd final repeats the 1st (${said}); the runtime keeps what follows the previous final`);
  }
  ctx.report.set('final', 'ok', `each utterance alone: ${said}`);
}

function liveWordsRow(ctx: CheckContext, heard: Heard[]): void {
  const perUtterance = heard.map((h) => [...h.live, ...h.released].filter((d) => d !== ''));
  const total = perUtterance.reduce((n, d) => n + d.length, 0);
  if (total === 0) return ctx.report.set('live-words', 'note', 'no live text came: only finals');
  // A delta that neither opens the utterance nor starts with a space or punctuation continues a word.
  const fragments = perUtterance.flatMap((deltas) => deltas.filter((d, i) => i > 0 && !/^[\s\p{P}]/u.test(d)));
  if (fragments.length === 0) return ctx.report.set('live-words', 'ok', `${total} deltas, each a whole word`);
  ctx.report.set('live-words', 'note', `word fragments: ${fragments.length} of ${total} deltas continue a word (${fragments.slice(0, 3).map((f) => `«${f}»`).join(', ')})`);
}

function lastWordsRow(ctx: CheckContext, heard: Heard[], tailMs: number): void {
  const own = ownWords(heard);
  if (own.every((w) => !w?.length)) return ctx.report.set('last-words', 'note', 'not measured: no final with text');
  // What a final holds past the live text received before its flush came only with the flush.
  const held = heard.map((h, i) => (own[i] ?? []).slice(words(h.live.join('')).length)).map((w, i) => (w.length > 0 ? `«${w.join(' ')}» (${ordinal(i)})` : null)).filter(Boolean);
  if (held.length === 0) return ctx.report.set('last-words', 'ok', `every word came as live text within the ${formatMs(tailMs)} of silence before the flush`);
  ctx.report.set('last-words', 'note', `words came only with the flush: ${held.join(', ')}`);
}

/** Each final's own words: a final that repeats the one before it (cumulative) owns only what follows it. */
function ownWords(heard: Heard[]): Array<string[] | undefined> {
  let previous: string[] = [];
  return heard.map((h) => {
    if (h.final === undefined) return undefined;
    const all = words(h.final);
    const own = repeats(all, previous) ? all.slice(previous.length) : all;
    previous = all;
    return own;
  });
}

/** Whether `all` begins with the whole of `previous`, and goes on. */
function repeats(all: string[], previous: string[]): boolean {
  return previous.length > 0 && all.length > previous.length && previous.every((w, i) => all[i] === w);
}

function notMeasured(ctx: CheckContext, rows: RowId[], why: string): void {
  for (const row of rows) ctx.report.set(row, 'note', `not measured: ${why}`);
}

const isDelta = (e: TimedEvent) => e.event.type === 'transcription.text.delta';

/** Lower-case words without punctuation, to compare two texts. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'’]+/gu, ' ')
    .split(' ')
    .filter(Boolean);
}

function withSilence(pcm: Int16Array, ms: number): Int16Array {
  const out = new Int16Array(pcm.length + (INPUT_SAMPLE_RATE * ms) / 1000);
  out.set(pcm);
  return out;
}

function ordinal(i: number): string {
  return ['1st', '2nd', '3rd'][i] ?? `${i + 1}th`;
}

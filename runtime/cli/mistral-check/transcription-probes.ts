import { mistralSdkServerUrl } from '../../../adapters/mistral/base-url.ts';
import { VOXTRAL_STREAMING_DELAY_MS } from '../../../adapters/voice/mistral-transcriber.ts';
import { INPUT_SAMPLE_RATE } from '../../../machines/voice/voice.port.ts';
import type { Config } from '../../config.ts';
import { honouringRetryAfter, messageOf, type CheckContext } from './context.ts';
import { describeError, ProbeSocket, rawOf, schemaFailure, textOf, unknownEvent, type SetupOutcome, type TimedEvent } from './probe-socket.ts';
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
/** What a senior's socket would favour: their preferred name and a contact's. */
const PROBE_CONTEXT_BIAS = ['Marie', 'Claire'];
/** The rows the main socket's phrases fill. */
const PHRASE_ROWS: RowId[] = ['flush-answered', 'flush-time', 'final', 'live-words', 'last-words', 'end'];

/** The runtime's `session.update`: the documented fields only (`target_streaming_delay_ms` when STT_STREAMING_DELAY_MS is set). */
export function runtimeSession(config: Config): Record<string, unknown> {
  return {
    audio_format: { encoding: 'pcm_s16le', sample_rate: INPUT_SAMPLE_RATE },
    ...(config.STT_STREAMING_DELAY_MS !== undefined ? { target_streaming_delay_ms: config.STT_STREAMING_DELAY_MS } : {}),
  };
}

/** Every socket the probes opened: each is closed at the end of the run, and its events read for the schema row. */
export class Sockets {
  readonly all: ProbeSocket[] = [];

  async open(ctx: CheckContext): Promise<ProbeSocket> {
    const url = `${mistralSdkServerUrl(ctx.config.MISTRAL_BASE_URL, ctx.config.KOHAMI_ENV)}/v1/audio/transcriptions/realtime?model=${encodeURIComponent(ctx.config.MISTRAL_STT_MODEL)}`;
    const socket = await honouringRetryAfter(ctx, 'the transcription socket', () => ProbeSocket.open(url, ctx.apiKey, ctx.config.MISTRAL_STT_MODEL, ctx.bounds.connectMs, ctx.signal));
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
  const setup = await socket.configure(session, ctx.bounds.setupMs, ctx.signal);
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

/** Each undocumented field alone beside the documented ones, on a socket of its own (no audio). */
export async function fieldProbes(ctx: CheckContext, sockets: Sockets): Promise<void> {
  await fieldProbe(ctx, sockets, 'language', 'language', 'fr', 'STT_LANGUAGE', 'fr');
  await fieldProbe(ctx, sockets, 'context-bias', 'context_bias', PROBE_CONTEXT_BIAS, 'STT_CONTEXT_BIAS', 'on');
}

/** A socket set up as the runtime's, then left without audio for `idleMs`: does the service end it first? */
export async function idleProbe(ctx: CheckContext, sockets: Sockets): Promise<void> {
  const { idleMs } = ctx.bounds;
  if (idleMs === 0) return ctx.report.set('idle', 'note', 'not probed (--idle-s 0)');
  const socket = await setUp(ctx, sockets, 'idle');
  if (!socket) return;
  const openedAt = performance.now();
  const ended = await socket.waitFor((e) => e.type === 'error', idleMs, ctx.signal);
  const after = `${((performance.now() - openedAt) / 1000).toFixed(1)} s without audio`;
  if (ended === 'timeout') return ctx.report.set('idle', 'ok', `still open after ${after}`);
  ctx.report.set('idle', 'note', `${ended === 'closed' ? 'closed' : `error «${describeError(ended.event)}»`} after ${after}: the runtime must close an idle socket before the service does`);
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

function setupRow(ctx: CheckContext, session: Record<string, unknown>, setup: SetupOutcome): void {
  const sent = `{${Object.entries(session).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')}}`;
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
    const setup = await socket.configure(runtimeSession(ctx.config), ctx.bounds.setupMs, ctx.signal);
    if (setup.kind !== 'refused') return socket;
    ctx.report.set(row, 'note', `not measured: set-up refused (${setup.message})`);
  } catch (err) {
    ctx.report.set(row, 'note', `not measured: no socket (${messageOf(err)})`);
  }
  return null;
}

async function fieldProbe(ctx: CheckContext, sockets: Sockets, row: RowId, field: string, value: unknown, setting: string, settingValue: string): Promise<void> {
  let socket: ProbeSocket;
  try {
    socket = await sockets.open(ctx);
  } catch (err) {
    return ctx.report.set(row, 'note', `not measured: no socket (${messageOf(err)})`);
  }
  const outcome = await socket.configure({ ...runtimeSession(ctx.config), [field]: value }, ctx.bounds.setupMs, ctx.signal);
  socket.close();
  if (outcome.kind === 'refused') {
    ctx.report.advise(setting, null, `the service refuses \`${field}\``);
    return ctx.report.set(row, 'ok', `refused, as documented: ${outcome.message}`);
  }
  const how = outcome.kind === 'acknowledged' ? (field in outcome.echoed ? 'echoed in session.updated' : 'not echoed in session.updated: it may be ignored') : 'no error, never acknowledged';
  ctx.report.advise(setting, settingValue, `the service accepts \`${field}\``);
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
  else if (answered.length === 0) ctx.report.set('flush-answered', 'break', `none of ${n} answered within ${formatMs(ctx.bounds.flushMs)}: no utterance would be transcribed`);
  else {
    const missing = heard.map((h, i) => (h.final === undefined ? ordinal(i) : null)).filter(Boolean);
    ctx.report.set('flush-answered', 'note', `the ${missing.join(' and ')} not answered within ${formatMs(ctx.bounds.flushMs)} (${answered.length} of ${n} answered): the runtime moves the utterance to a fresh socket`);
  }
  const times = heard.filter((h) => h.answeredMs !== undefined).map((h) => h.answeredMs!);
  if (times.length === 0) return ctx.report.set('flush-time', 'note', 'not measured: no flush answered');
  const shown = times.map(formatMs).join(', ');
  const slowest = Math.max(...times);
  const budget = ctx.config.STT_BUDGET_MS;
  if (slowest > budget) return ctx.report.set('flush-time', 'break', `${shown}: past STT_BUDGET_MS (${formatMs(budget)}), the runtime gives up on the utterance and speaks the SOS line`);
  if (slowest > SLOW_FLUSH_MS) return ctx.report.set('flush-time', 'note', `${shown}: over ${formatMs(SLOW_FLUSH_MS)}, the answer to a finished sentence waits on it`);
  ctx.report.set('flush-time', 'ok', shown);
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

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { FakeVoxtralSpeech } from './fake-voxtral-speech.ts';
import { checkingRealtimeAnswers, realtimeRefusal, REFUSED_INPUT_CODE } from './mistral-contract.ts';
import type { ServiceBehaviour } from './service-behaviours.ts';
import type { WireIssue } from './zod-wire-walker.ts';

export { FAKE_SPEECH_SAMPLE_RATE, fakeSpeechDurationMs, fakeSpeechOgg, fakeSpeechPackets, fakeSpeechPcm, type SpeechRequestRecord, type VoicesRequestRecord } from './fake-voxtral-speech.ts';

/**
 * Loopback stand-ins for Mistral's audio endpoints, speaking their wire formats so the real
 * `@mistralai/mistralai` SDK runs unchanged against them:
 * - realtime transcription, `GET /v1/audio/transcriptions/realtime?model=…` upgraded to a WebSocket;
 * - speech, `POST /v1/audio/speech` and `GET /v1/audio/voices`: the half it extends, fake-voxtral-speech.ts.
 * Mount it on a `FakeMistral` (one base URL answers chat, embeddings and audio, as in production)
 * or `start()` it on its own port.
 */

/**
 * What the fake hears in one utterance and does when it is flushed. Times are ms into the audio the fake
 * receives for the utterance (from its first byte after the previous flush): the runtime's stream starts
 * with 300 ms of pre-roll, so speech that begins at once in the kiosk's audio lies at about 300 ms here.
 */
export interface ScriptedUtterance {
  /** The final transcript; its words also leave as interim deltas while audio arrives. */
  text: string;
  /** The flush's transcript when the recognizer revises its interim words at the end (default `text`). */
  finalText?: string;
  /** `drop`: the socket dies at flush; `error`: an error event answers the flush; `hang`: the flush is never answered. */
  fault?: 'drop' | 'error' | 'hang';
  /**
   * Where the speech lies in the utterance's audio (voiced spans, in order). Words are placed along them in
   * proportion to their character offsets (a pause between two spans holds no word); when the first span
   * gives a `text`, each span with a text opens a phrase (the utterance's words, in order) whose words are
   * placed within it and the spans after it that have none (its inner pauses). Default: one
   * span from `FakeVoxtral.speechStartMs`, `text.length × FakeVoxtral.msPerChar` long.
   */
  speech?: SpeechSpan[];
  /** Explicit per-word times (one per word of `text`: when the word has been said, its end); overrides `speech`. */
  wordEndsMs?: number[];
}

export interface SpeechSpan {
  startMs: number;
  endMs: number;
  text?: string;
}

/** One interim delta as it left the fake: its text, the utterance's audio received by then, and when (performance.now()). */
export interface InterimRecord {
  text: string;
  audioMs: number;
  at: number;
}

export interface TranscriptionSocketRecord {
  model: string;
  authorization: string | undefined;
  /** Every `session` payload received in `session.update`, in order (refused ones included). */
  updates: Array<Record<string, unknown>>;
  /** `session.update`s refused with an `error` event (a field the SDK's payload lacks). */
  refusedUpdates: number;
  /** Decoded microphone bytes received since the socket opened. */
  audioBytes: number;
  flushes: number;
  /** `input_audio.end` messages received. */
  ends: number;
  closed: boolean;
  /** Interim deltas sent while audio arrived (not those released by a flush), in order. */
  interims: InterimRecord[];
}

/** Bytes per ms of the transcription socket's audio (16 kHz s16le mono). */
const BYTES_PER_MS = 32;
/** Voxtral realtime's default `target_streaming_delay_ms`. */
export const DEFAULT_STREAMING_DELAY_MS = 480;

export class FakeVoxtral extends FakeVoxtralSpeech {
  // --- realtime transcription ---
  /** `late-flush`: how late every flush is answered. */
  lateFlushMs = 1500;
  /** `idle-error`: a socket that receives no audio this long gets an error event (code 3804) and is closed. */
  idleErrorMs = 30_000;
  /** One entry per flush, consumed in order; an empty script answers with an empty transcript. */
  readonly utterances: ScriptedUtterance[] = [];
  /** Delay before `session.created`, and before `transcription.done` after a flush. */
  transcriptionLatencyMs = 0;
  /** While set, a new socket's `session.created` also waits for it to settle: a service that accepts when the test says so. */
  openingHeld: Promise<void> | null = null;
  /**
   * How far behind the audio interim words come, as Voxtral realtime's `target_streaming_delay_ms`: a word
   * leaves this long after the audio where it was said arrived (or at the flush, if that comes first). A
   * client's `session.update` with `target_streaming_delay_ms` overrides it for its socket.
   */
  streamingDelayMs = DEFAULT_STREAMING_DELAY_MS;
  /** Where speech starts in an utterance's audio when the script does not say (the runtime's 300 ms pre-roll). */
  speechStartMs = 300;
  /** The pace that places a script's words when it gives no times: ms of speech per character of its text. */
  msPerChar = 70;
  /**
   * Which queue a socket's utterances come from (default `utterances`, shared by every socket): e.g. one
   * queue per senior, told apart by the `context_bias` of the socket's `session.update`. Asked at every
   * append and flush, so it may change once the update has come.
   */
  queueFor: ((socket: TranscriptionSocketRecord) => ScriptedUtterance[]) | null = null;
  /**
   * A fake that hears its audio: where the audio just received ends in the scripts' own timeline (ms),
   * e.g. found in the audio the script was written for; undefined when it cannot tell (digital silence),
   * and the words' times keep their last place. Set, the scripts' times are that timeline's — not ms into
   * the audio received since the last flush — so no guess of where the runtime's pre-roll began is made,
   * and the words not said at a flush keep their times for the next utterance.
   */
  clock: ((socket: TranscriptionSocketRecord, pcm: Int16Array) => number | undefined) | null = null;
  /** The next N upgrade attempts are refused with 503 (a service outage). */
  refuseConnections = 0;
  /** Upgrade attempts refused so far (outage or missing credentials). */
  refused = 0;
  readonly sockets: TranscriptionSocketRecord[] = [];
  private readonly wss = checkingRealtimeAnswers(new WebSocketServer({ noServer: true }));
  private readonly live = new Set<WebSocket>();
  private server: Server | undefined;
  baseUrl = '';

  /** Standalone: its own loopback port; `baseUrl` ends in `/v1` like MISTRAL_BASE_URL. */
  async start(): Promise<this> {
    const server = createServer((req, res) => {
      void readJson(req).then((body) => {
        if (!this.request(req, res, body)) res.writeHead(404).end();
      });
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!this.upgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async stop(): Promise<void> {
    for (const ws of this.live) ws.terminate();
    this.wss.close();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Kills every open transcription socket without a close frame, as a network cut would. */
  dropAll(): void {
    for (const ws of this.live) ws.terminate();
  }

  get openSockets(): number {
    return this.live.size;
  }

  /** The WebSocket side; true when the upgrade was for the realtime transcription path. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname !== '/v1/audio/transcriptions/realtime') return false;
    const model = url.searchParams.get('model');
    if (this.rateLimitsUpgrade()) {
      this.refused += 1;
      socket.end(`HTTP/1.1 429 Too Many Requests\r\nRetry-After: ${this.rateLimitRetryAfter}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return true;
    }
    if (this.refuseConnections > 0 || !model || !req.headers.authorization) {
      const status = this.refuseConnections > 0 ? 503 : 401;
      this.refused += 1;
      if (this.refuseConnections > 0) this.refuseConnections -= 1;
      socket.end(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return true;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.transcription(ws, model, req.headers.authorization));
    return true;
  }

  /** `rate-limited`: the first upgrade after the behaviour is switched on is refused, the later ones served. */
  private rateLimitsUpgrade(): boolean {
    return this.behaviours.rateLimits('upgrade');
  }

  private transcription(ws: WebSocket, model: string, authorization: string | undefined): void {
    const record: TranscriptionSocketRecord = { model, authorization, updates: [], refusedUpdates: 0, audioBytes: 0, flushes: 0, ends: 0, closed: false, interims: [] };
    this.sockets.push(record);
    this.live.add(ws);
    ws.once('close', () => {
      record.closed = true;
      this.live.delete(ws);
    });
    new FakeRealtimeSession(this, ws, record);
  }

  /** When each word of the utterance has been said (ms into its audio). */
  wordEnds(utterance: ScriptedUtterance, words: string[] = wordsOf(utterance.text)): number[] {
    if (utterance.wordEndsMs) {
      if (utterance.wordEndsMs.length !== words.length) throw new Error(`fake-voxtral: ${utterance.wordEndsMs.length} word times for ${words.length} words`);
      return utterance.wordEndsMs;
    }
    const spans = utterance.speech ?? [{ startMs: this.speechStartMs, endMs: this.speechStartMs + utterance.text.length * this.msPerChar }];
    return placeWords(words, spans);
  }
}

/** The settings `accepts-undocumented-fields` takes, though the SDK's `session.update` payload lacks them. */
const UNDOCUMENTED_SETTINGS = ['language', 'context_bias'];
/** A break `accepts-undocumented-fields` takes (and a test that sends those settings on purpose declares). */
export const isUndocumentedSetting = (issue: WireIssue) => issue.kind === 'extra_forbidden' && issue.path.length === 2 && issue.path[0] === 'session' && UNDOCUMENTED_SETTINGS.includes(String(issue.path[1]));

/** `held-last-words`: live text stays this many words behind what was said. */
const HELD_WORDS = 2;
/** `fragments`: a word longer than this leaves in two pieces, its first two letters, then the rest. */
const FRAGMENT_MIN_LETTERS = 4;
/** The code of the error that closes an idle session (reported; docs' error glossary). */
const IDLE_ERROR_CODE = 3804;

/** A flush's answer: its words not yet sent as live text, and its final text (null: hung, never answered). */
interface Answer {
  deltas: string[];
  text: string | null;
}

/** An answer the socket owes: sent at its timer, or with the end's answer. */
interface OwedAnswer extends Answer {
  timer: NodeJS.Timeout | null;
}

/** One piece of live text: a word (under `fragments`, half of one) and where in the audio it has been said. */
interface DeltaUnit {
  text: string;
  atMs: number;
  word: number;
}

/** The live text of an utterance's words, each led by its space (the first by none). */
function deltaUnits(words: string[], ends: number[], fragments: boolean): DeltaUnit[] {
  return words.flatMap((word, i) => {
    const lead = i === 0 ? '' : ' ';
    if (!fragments || word.length <= FRAGMENT_MIN_LETTERS) return [{ text: lead + word, atMs: ends[i]!, word: i }];
    // The first piece halfway through the word: « de » of « demain » is live text for a while.
    const startMs = i === 0 ? Math.max(0, ends[0]! - 300) : ends[i - 1]!;
    return [
      { text: lead + word.slice(0, 2), atMs: (startMs + ends[i]!) / 2, word: i },
      { text: word.slice(2), atMs: ends[i]!, word: i },
    ];
  });
}

/** One realtime transcription socket of the fake: Voxtral's protocol, and the behaviours switched on. */
class FakeRealtimeSession {
  private readonly session: { request_id: string; model: string; audio_format: Record<string, unknown>; target_streaming_delay_ms: number | null };
  /** The utterance in progress: audio received since the last flush (ms), its live text scheduled to leave, and sent. */
  private utteranceMs = 0;
  private audioSinceFlush = 0;
  private scheduled = 0;
  private sent = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** The utterance's live text waiting for its streaming delay (dropped at its flush). */
  private readonly deltaTimers = new Set<NodeJS.Timeout>();
  private idleTimer: NodeJS.Timeout | null = null;
  /** Answers owed, in order: flushes not answered yet (late, or unanswered until the end). */
  private readonly owed: OwedAnswer[] = [];
  /** The final texts this socket has answered, for `cumulative-final`. */
  private readonly answered: string[] = [];

  private readonly fake: FakeVoxtral;
  private readonly ws: WebSocket;
  private readonly record: TranscriptionSocketRecord;

  constructor(fake: FakeVoxtral, ws: WebSocket, record: TranscriptionSocketRecord) {
    this.fake = fake;
    this.ws = ws;
    this.record = record;
    this.session = { request_id: `req-${fake.sockets.length}`, model: record.model, audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 }, target_streaming_delay_ms: null };
    ws.once('close', () => {
      for (const timer of this.timers) clearTimeout(timer);
    });
    ws.on('message', (data) => this.receive(String(data)));
    const held = fake.openingHeld;
    const created = () => this.send({ type: 'session.created', session: this.session });
    this.later(() => (held ? void held.then(created) : created()), fake.transcriptionLatencyMs);
    this.armIdleError();
  }

  private is(behaviour: ServiceBehaviour): boolean {
    return this.fake.behaviours.has(behaviour);
  }

  private receive(data: string): void {
    // Every message is held to the SDK's schemas (mistral-contract.ts): a break is refused, unless a behaviour takes it.
    const refusal = realtimeRefusal(data, (issue) => this.is('accepts-undocumented-fields') && isUndocumentedSetting(issue));
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return this.refuse(refusal!);
    }
    if (message.type === 'session.update') return this.update(message.session, refusal);
    if (refusal !== null) return this.refuse(refusal);
    if (message.type === 'input_audio.append') return this.append(String(message.audio));
    if (message.type === 'input_audio.flush') return this.flush();
    if (message.type === 'input_audio.end') return this.end();
  }

  private refuse(why: string): void {
    this.send({ type: 'error', error: { message: why, code: REFUSED_INPUT_CODE } });
  }

  private update(update: unknown, refusal: string | null): void {
    // Mistral locks the session once audio flows.
    if (this.record.audioBytes > 0) return this.send({ type: 'error', error: { message: 'session is locked once audio started', code: 4009 } });
    this.record.updates.push(update as Record<string, unknown>);
    if (refusal !== null) {
      this.record.refusedUpdates += 1;
      return this.refuse(refusal);
    }
    // Only the documented settings are the session's (an accepted undocumented one is not echoed).
    const settings = update as Record<string, unknown>;
    if (settings.audio_format !== undefined) this.session.audio_format = settings.audio_format as Record<string, unknown>;
    if (settings.target_streaming_delay_ms !== undefined) this.session.target_streaming_delay_ms = settings.target_streaming_delay_ms as number | null;
    if (!this.is('no-session-updated')) this.send({ type: 'session.updated', session: this.session });
  }

  private queue(): ScriptedUtterance[] {
    return this.fake.queueFor?.(this.record) ?? this.fake.utterances;
  }

  private append(base64: string): void {
    const audio = Buffer.from(base64, 'base64');
    this.record.audioBytes += audio.length;
    this.audioSinceFlush += audio.length;
    this.armIdleError();
    if (this.fake.clock) {
      // A copy: a base64 Buffer may start at an odd offset of its pool.
      const samples = new Int16Array(audio.length >> 1);
      new Uint8Array(samples.buffer).set(audio.subarray(0, samples.byteLength));
      const heardMs = this.fake.clock(this.record, samples);
      if (heardMs !== undefined) this.utteranceMs = Math.max(this.utteranceMs, heardMs);
    } else this.utteranceMs += audio.length / BYTES_PER_MS;
    // What was said comes from the script; when, from the audio received: a word leaves the streaming
    // delay after the audio where it was said has arrived.
    const utterance = this.queue()[0];
    if (!utterance) return;
    const { ends, units } = this.live(utterance);
    while (this.scheduled < units.length && this.releaseMs(units[this.scheduled]!, ends) <= this.utteranceMs) {
      const k = this.scheduled++;
      const timer = this.later(() => {
        this.deltaTimers.delete(timer);
        if (k !== this.sent) return;
        this.delta(units[k]!.text);
        this.record.interims.push({ text: units[k]!.text.trim(), audioMs: this.utteranceMs, at: performance.now() });
        this.sent += 1;
      }, this.session.target_streaming_delay_ms ?? this.fake.streamingDelayMs);
      this.deltaTimers.add(timer);
    }
  }

  /** The utterance's words, when each is said, and its live text. */
  private live(utterance: ScriptedUtterance): { words: string[]; ends: number[]; units: DeltaUnit[] } {
    const words = wordsOf(utterance.text);
    const ends = this.fake.wordEnds(utterance, words);
    return { words, ends, units: deltaUnits(words, ends, this.is('fragments')) };
  }

  /** When a piece of live text may leave: once said — under `held-last-words`, once two more words have been. */
  private releaseMs(unit: DeltaUnit, ends: number[]): number {
    return this.is('held-last-words') ? (ends[unit.word + HELD_WORDS] ?? Infinity) : unit.atMs;
  }

  private flush(): void {
    this.record.flushes += 1;
    const { answer, fault } = this.takeUtterance();
    if (fault === 'drop') return void this.ws.terminate();
    if (fault === 'error') return void this.later(() => this.send({ type: 'error', error: { message: 'transcription failed', code: 5000 } }), this.fake.transcriptionLatencyMs);
    const owed: OwedAnswer = { ...answer, text: fault === 'hang' ? null : answer.text, timer: null };
    this.owed.push(owed);
    const unanswered = this.is('flush-unanswered') || (this.is('flush-unanswered-after-first') && this.record.flushes > 1);
    if (fault === 'hang' || unanswered) return;
    owed.timer = this.later(() => this.answer([owed]), this.fake.transcriptionLatencyMs + (this.is('late-flush') ? this.fake.lateFlushMs : 0));
  }

  /**
   * The end of the audio, as the python client used it before flush existed: every answer owed and the
   * audio since the last flush are answered in one final text, then the socket closes — unless a hung
   * flush is owed (the service is stuck on it).
   */
  private end(): void {
    this.record.ends += 1;
    if (this.owed.some((o) => o.text === null)) return;
    const answers: Answer[] = this.owed.map((o) => {
      if (o.timer) clearTimeout(o.timer);
      return o;
    });
    if (this.audioSinceFlush > 0) answers.push(this.takeUtterance().answer);
    this.later(() => {
      this.answer(answers);
      this.ws.close(1000);
    }, this.fake.transcriptionLatencyMs);
  }

  /**
   * The script's next utterance, as much of it as was said in the audio received since the last flush (a
   * script with explicit times is a timeline: the words not said yet are the next utterance's; without
   * times, the rest comes at the flush); the utterance in progress starts over.
   */
  private takeUtterance(): { answer: Answer; fault: ScriptedUtterance['fault'] } {
    const script = this.queue();
    const utterance = script.shift() ?? { text: '' };
    const { words, ends, units } = this.live(utterance);
    const said = utterance.speech || utterance.wordEndsMs ? ends.filter((end) => end <= this.utteranceMs).length : words.length;
    if (said < words.length && !utterance.fault) script.unshift(continuation(utterance, words, ends, said, this.utteranceMs, this.fake.clock ? null : this.fake.speechStartMs));
    // The live text not sent yet goes before the final one (under `held-last-words`, the last words go in the final text only).
    const live = said - (this.is('held-last-words') ? HELD_WORDS : 0);
    const deltas = units.slice(this.sent).filter((u) => u.word < live).map((u) => u.text);
    for (const timer of this.deltaTimers) {
      clearTimeout(timer);
      this.timers.delete(timer);
    }
    this.deltaTimers.clear();
    this.utteranceMs = 0;
    this.audioSinceFlush = 0;
    this.scheduled = 0;
    this.sent = 0;
    const text = said === words.length ? (utterance.finalText ?? utterance.text) : words.slice(0, said).join(' ');
    return { answer: { deltas, text }, fault: utterance.fault };
  }

  /** One final text for these answers: under `cumulative-final`, led by every final this socket gave before. */
  private answer(answers: Answer[]): void {
    for (const answer of answers) {
      const at = this.owed.indexOf(answer as OwedAnswer);
      if (at >= 0) this.owed.splice(at, 1);
      for (const text of answer.deltas) this.delta(text);
    }
    const text = answers.map((a) => a.text ?? '').filter(Boolean).join(' ');
    const final = this.is('cumulative-final') ? [...this.answered, text].filter(Boolean).join(' ') : text;
    if (text !== '') this.answered.push(text);
    const words = wordsOf(final).length;
    this.send({
      type: 'transcription.done',
      model: this.record.model,
      text: final,
      language: 'fr',
      segments: [],
      usage: { prompt_tokens: 1, completion_tokens: words, total_tokens: 1 + words, prompt_audio_seconds: 1 },
    });
  }

  private delta(text: string): void {
    this.send({ type: 'transcription.text.delta', text });
  }

  /** `idle-error`: the session ends `idleErrorMs` after its last audio. */
  private armIdleError(): void {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.timers.delete(this.idleTimer);
      this.idleTimer = null;
    }
    if (!this.is('idle-error')) return;
    this.idleTimer = this.later(() => {
      this.send({ type: 'error', error: { message: 'no audio received: session closed', code: IDLE_ERROR_CODE } });
      this.ws.close(1000);
    }, this.fake.idleErrorMs);
  }

  private later(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private send(event: Record<string, unknown>): void {
    // Checked against the SDK's inbound schema as it leaves (checkingRealtimeAnswers): an event off it is the fake's bug.
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(event));
  }
}

const wordsOf = (text: string): string[] => text.split(/\s+/).filter(Boolean);

/**
 * Each word's end along the voiced spans, in proportion to its character offset in the words joined by
 * one space: the spans' voiced time laid end to end, the pauses between them skipped.
 */
export function placeWords(words: string[], spans: SpeechSpan[]): number[] {
  if (spans[0]?.text !== undefined) {
    // A span with a text opens a phrase; the spans after it without one are that phrase's own pauses.
    const phrases: Array<{ text: string; spans: SpeechSpan[] }> = [];
    for (const s of spans) {
      const span = { startMs: s.startMs, endMs: s.endMs };
      if (s.text !== undefined) phrases.push({ text: s.text, spans: [span] });
      else phrases.at(-1)!.spans.push(span);
    }
    const ends = phrases.flatMap((p) => placeWords(wordsOf(p.text), p.spans));
    if (ends.length !== words.length) throw new Error(`fake-voxtral: the spans' texts hold ${ends.length} words, the utterance ${words.length}`);
    return ends;
  }
  const voiced = spans.reduce((sum, s) => sum + Math.max(0, s.endMs - s.startMs), 0);
  const chars = words.reduce((n, w) => n + w.length, 0) + Math.max(0, words.length - 1);
  let offset = 0;
  return words.map((word, i) => {
    offset += word.length + (i > 0 ? 1 : 0);
    let left = chars === 0 ? 0 : (offset / chars) * voiced;
    for (const span of spans) {
      const length = Math.max(0, span.endMs - span.startMs);
      if (left <= length) return span.startMs + left;
      left -= length;
    }
    return spans.at(-1)?.endMs ?? 0;
  });
}

/**
 * What an utterance flushed before all its words were said leaves for the next one: the words not yet
 * said, their times moved so that the speech resuming after the flush starts where the next
 * utterance's does (`speechStartMs` into its audio, after the runtime's pre-roll) — or kept as they are
 * (null) when a clock places the audio in the script's timeline.
 */
function continuation(utterance: ScriptedUtterance, words: string[], ends: number[], said: number, flushedAtMs: number, speechStartMs: number | null): ScriptedUtterance {
  const spans = (utterance.speech ?? [{ startMs: 0, endMs: ends.at(-1)! }]).filter((s) => s.endMs > flushedAtMs).map((s) => ({ startMs: Math.max(s.startMs, flushedAtMs), endMs: s.endMs }));
  // The spans' own texts are dropped: the words' times are carried over as they were.
  const resumesAt = spans[0]?.startMs ?? flushedAtMs;
  const shift = speechStartMs === null ? 0 : speechStartMs - resumesAt;
  return {
    text: words.slice(said).join(' '),
    speech: spans.map((s) => ({ startMs: s.startMs + shift, endMs: s.endMs + shift })),
    wordEndsMs: ends.slice(said).map((end) => end + shift),
  };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

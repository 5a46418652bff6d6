import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { FakeVoxtralSpeech } from './fake-voxtral-speech.ts';

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
  /** Every `session` payload received in `session.update`, in order. */
  updates: Array<Record<string, unknown>>;
  /** Decoded microphone bytes received since the socket opened. */
  audioBytes: number;
  flushes: number;
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
  /** One entry per flush, consumed in order; an empty script answers with an empty transcript. */
  readonly utterances: ScriptedUtterance[] = [];
  /** Delay before `session.created`, and before `transcription.done` after a flush. */
  transcriptionLatencyMs = 0;
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
  private readonly wss = new WebSocketServer({ noServer: true });
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

  private transcription(ws: WebSocket, model: string, authorization: string | undefined): void {
    const record: TranscriptionSocketRecord = { model, authorization, updates: [], audioBytes: 0, flushes: 0, closed: false, interims: [] };
    this.sockets.push(record);
    this.live.add(ws);
    const session = {
      request_id: `req-${this.sockets.length}`,
      model,
      audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 } as Record<string, unknown>,
      target_streaming_delay_ms: null as number | null,
    };
    const send = (event: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(event));
    const queue = () => this.queueFor?.(record) ?? this.utterances;
    const delayMs = () => session.target_streaming_delay_ms ?? this.streamingDelayMs;
    // The utterance in progress: audio received since the last flush, its words scheduled to leave, and sent.
    let utteranceMs = 0;
    let scheduled = 0;
    let sent = 0;
    const timers = new Set<NodeJS.Timeout>();
    const delta = (words: string[], i: number) => send({ type: 'transcription.text.delta', text: `${i === 0 ? '' : ' '}${words[i]}` });
    ws.once('close', () => {
      record.closed = true;
      this.live.delete(ws);
      for (const timer of timers) clearTimeout(timer);
    });
    ws.on('message', (data) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(String(data)) as Record<string, unknown>;
      } catch {
        return send({ type: 'error', error: { message: 'invalid JSON', code: 4000 } });
      }
      if (message.type === 'session.update') {
        // Mistral locks the session once audio flows.
        if (record.audioBytes > 0) return send({ type: 'error', error: { message: 'session is locked once audio started', code: 4009 } });
        const update = message.session as Record<string, unknown>;
        record.updates.push(update);
        Object.assign(session, update);
        return send({ type: 'session.updated', session });
      }
      if (message.type === 'input_audio.append') {
        const audio = Buffer.from(String(message.audio), 'base64');
        record.audioBytes += audio.length;
        if (this.clock) {
          // A copy: a base64 Buffer may start at an odd offset of its pool.
          const samples = new Int16Array(audio.length >> 1);
          new Uint8Array(samples.buffer).set(audio.subarray(0, samples.byteLength));
          const heardMs = this.clock(record, samples);
          if (heardMs !== undefined) utteranceMs = Math.max(utteranceMs, heardMs);
        } else utteranceMs += audio.length / BYTES_PER_MS;
        // What was said comes from the script; when, from the audio received: a word leaves the streaming
        // delay after the audio where it was said has arrived.
        const utterance = queue()[0];
        if (!utterance) return;
        const words = wordsOf(utterance.text);
        const ends = this.wordEnds(utterance, words);
        while (scheduled < words.length && ends[scheduled]! <= utteranceMs) {
          const i = scheduled++;
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (i !== sent) return;
            delta(words, i);
            record.interims.push({ text: words[i]!, audioMs: utteranceMs, at: performance.now() });
            sent += 1;
          }, delayMs());
          timers.add(timer);
        }
        return;
      }
      if (message.type === 'input_audio.flush') {
        record.flushes += 1;
        const script = queue();
        const utterance = script.shift() ?? { text: '' };
        const words = wordsOf(utterance.text);
        // A script with explicit times is a timeline: words not yet said when the utterance is flushed
        // (a pause taken for its end) are the next utterance's. Without times, the rest comes at the flush.
        const said = utterance.speech || utterance.wordEndsMs ? this.wordEnds(utterance, words).filter((end) => end <= utteranceMs).length : words.length;
        if (said < words.length && !utterance.fault) script.unshift(continuation(utterance, words, this.wordEnds(utterance, words), said, utteranceMs, this.clock ? null : this.speechStartMs));
        const from = sent;
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        utteranceMs = 0;
        scheduled = 0;
        sent = 0;
        if (utterance.fault === 'hang') return;
        if (utterance.fault === 'drop') return void ws.terminate();
        setTimeout(() => {
          if (utterance.fault === 'error') return send({ type: 'error', error: { message: 'transcription failed', code: 5000 } });
          for (let i = from; i < said; i++) delta(words, i);
          const text = said === words.length ? (utterance.finalText ?? utterance.text) : words.slice(0, said).join(' ');
          send({
            type: 'transcription.done',
            model,
            text,
            language: 'fr',
            segments: [],
            usage: { prompt_tokens: 1, completion_tokens: said, total_tokens: 1 + said, prompt_audio_seconds: 1 },
          });
        }, this.transcriptionLatencyMs);
        return;
      }
      if (message.type === 'input_audio.end') return void ws.close(1000);
      send({ type: 'error', error: { message: `unknown message type ${String(message.type)}`, code: 4001 } });
    });
    setTimeout(() => send({ type: 'session.created', session }), this.transcriptionLatencyMs);
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

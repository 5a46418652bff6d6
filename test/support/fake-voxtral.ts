import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * Loopback stand-ins for Mistral's audio endpoints, speaking their wire formats so the real
 * `@mistralai/mistralai` SDK runs unchanged against them:
 * - realtime transcription, `GET /v1/audio/transcriptions/realtime?model=…` upgraded to a WebSocket;
 * - speech, `POST /v1/audio/speech`, streamed (server-sent events) or not (JSON).
 * Mount it on a `FakeMistral` (one base URL answers chat, embeddings and audio, as in production)
 * or `start()` it on its own port.
 */

/** What the fake does with one utterance when it is flushed. */
export interface ScriptedUtterance {
  /** The final transcript; its words also leave as interim deltas while audio arrives. */
  text: string;
  /** `drop`: the socket dies at flush; `error`: an error event answers the flush; `hang`: the flush is never answered. */
  fault?: 'drop' | 'error' | 'hang';
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
}

export interface SpeechRequestRecord {
  body: Record<string, unknown>;
  authorization: string | undefined;
  /** The connection closed before the whole answer was sent (the client aborted). */
  closedEarly: boolean;
  /** The answer was sent in full. */
  completed: boolean;
}

/** Float32 PCM at 24 kHz: what Mistral's `response_format: "pcm"` returns. */
export const FAKE_SPEECH_SAMPLE_RATE = 24_000;
/** Audio per character of input: a sentence's length decides its duration. */
const SPEECH_MS_PER_CHAR = 60;
/** Each server-sent event carries this much audio. */
const SPEECH_DELTA_MS = 100;
/** Audio the realtime fake needs to hear before it releases one more interim word (16 kHz s16). */
const BYTES_PER_INTERIM_WORD = 16_000 * 2 * 0.2;

export class FakeVoxtral {
  // --- realtime transcription ---
  /** One entry per flush, consumed in order; an empty script answers with an empty transcript. */
  readonly utterances: ScriptedUtterance[] = [];
  /** Delay before `session.created`, and before `transcription.done` after a flush. */
  transcriptionLatencyMs = 0;
  /** The next N upgrade attempts are refused with 503 (a service outage). */
  refuseConnections = 0;
  /** Upgrade attempts refused so far (outage or missing credentials). */
  refused = 0;
  readonly sockets: TranscriptionSocketRecord[] = [];
  // --- speech ---
  /** Delay before the response headers of `/v1/audio/speech`. */
  speechLatencyMs = 0;
  /** Delay between two streamed deltas. */
  speechDeltaIntervalMs = 0;
  /** An HTTP status for the speech endpoint (e.g. 503), or 'hang' for a request never answered. */
  speechStatus: number | 'hang' = 200;
  /**
   * A streamed answer that fails part-way: after `afterMs` of audio the connection is cut (`drop`) or
   * kept open without another byte (`stall`). Null: answers are whole.
   */
  speechFault: { afterMs: number; kind: 'drop' | 'stall' } | null = null;
  /** 'tone' (a 440 Hz sine) or 'silence'. */
  speechSignal: 'tone' | 'silence' = 'tone';
  readonly speechRequests: SpeechRequestRecord[] = [];

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

  /** The HTTP side; true when the request was one of the audio endpoints. */
  request(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): boolean {
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/audio/speech')) return false;
    const record: SpeechRequestRecord = { body, authorization: req.headers.authorization, closedEarly: false, completed: false };
    this.speechRequests.push(record);
    res.once('close', () => (record.closedEarly = !record.completed));
    void this.speech(body, res, record);
    return true;
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
    const record: TranscriptionSocketRecord = { model, authorization, updates: [], audioBytes: 0, flushes: 0, closed: false };
    this.sockets.push(record);
    this.live.add(ws);
    const session = {
      request_id: `req-${this.sockets.length}`,
      model,
      audio_format: { encoding: 'pcm_s16le', sample_rate: 16_000 } as Record<string, unknown>,
      target_streaming_delay_ms: null as number | null,
    };
    const send = (event: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(event));
    // Bytes of the utterance in progress, and how many of its interim words already left.
    let utteranceBytes = 0;
    let wordsSent = 0;
    ws.once('close', () => {
      record.closed = true;
      this.live.delete(ws);
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
        const bytes = Buffer.from(String(message.audio), 'base64').length;
        record.audioBytes += bytes;
        utteranceBytes += bytes;
        // What was said comes from the script; when, from the audio received. The last word is held until flush.
        const words = (this.utterances[0]?.text ?? '').split(/\s+/).filter(Boolean);
        while (wordsSent < words.length - 1 && utteranceBytes >= (wordsSent + 1) * BYTES_PER_INTERIM_WORD) {
          send({ type: 'transcription.text.delta', text: `${wordsSent === 0 ? '' : ' '}${words[wordsSent]}` });
          wordsSent += 1;
        }
        return;
      }
      if (message.type === 'input_audio.flush') {
        record.flushes += 1;
        const utterance = this.utterances.shift() ?? { text: '' };
        const sent = wordsSent;
        utteranceBytes = 0;
        wordsSent = 0;
        if (utterance.fault === 'hang') return;
        if (utterance.fault === 'drop') return void ws.terminate();
        setTimeout(() => {
          if (utterance.fault === 'error') return send({ type: 'error', error: { message: 'transcription failed', code: 5000 } });
          const words = utterance.text.split(/\s+/).filter(Boolean);
          for (let i = sent; i < words.length; i++) send({ type: 'transcription.text.delta', text: `${i === 0 ? '' : ' '}${words[i]}` });
          send({
            type: 'transcription.done',
            model,
            text: utterance.text,
            language: 'fr',
            segments: [],
            usage: { prompt_tokens: 1, completion_tokens: words.length, total_tokens: 1 + words.length, prompt_audio_seconds: 1 },
          });
        }, this.transcriptionLatencyMs);
        return;
      }
      if (message.type === 'input_audio.end') return void ws.close(1000);
      send({ type: 'error', error: { message: `unknown message type ${String(message.type)}`, code: 4001 } });
    });
    setTimeout(() => send({ type: 'session.created', session }), this.transcriptionLatencyMs);
  }

  private async speech(body: Record<string, unknown>, res: ServerResponse, record: SpeechRequestRecord): Promise<void> {
    if (this.speechStatus === 'hang') return;
    await sleep(this.speechLatencyMs);
    if (res.destroyed) return;
    if (this.speechStatus !== 200) {
      res.writeHead(this.speechStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'error', message: 'speech service unavailable', type: 'service_unavailable' }));
      record.completed = true;
      return;
    }
    if (typeof body.input !== 'string' || body.input === '' || body.response_format !== 'pcm') {
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: [{ loc: ['body'], msg: 'input and response_format "pcm" are required here', type: 'value_error' }] }));
      record.completed = true;
      return;
    }
    const pcm = fakeSpeechPcm(body.input, this.speechSignal);
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ audio_data: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64') }));
      record.completed = true;
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const perDelta = (FAKE_SPEECH_SAMPLE_RATE * SPEECH_DELTA_MS) / 1000;
    const fault = this.speechFault;
    const faultAt = fault ? (FAKE_SPEECH_SAMPLE_RATE * fault.afterMs) / 1000 : Infinity;
    for (let at = 0; at < pcm.length; at += perDelta) {
      if (res.destroyed) return;
      if (at >= faultAt) {
        // Cut once what went out has left, so the client has read it before the connection dies.
        if (fault!.kind === 'drop') res.write(':\n\n', () => res.socket?.destroy());
        return;
      }
      const slice = pcm.subarray(at, at + perDelta);
      const audio_data = Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength).toString('base64');
      res.write(`event: speech.audio.delta\ndata: ${JSON.stringify({ type: 'speech.audio.delta', audio_data })}\n\n`);
      await sleep(this.speechDeltaIntervalMs);
    }
    if (res.destroyed) return;
    record.completed = true;
    res.end(`event: speech.audio.done\ndata: ${JSON.stringify({ type: 'speech.audio.done', usage: { prompt_tokens: 1, total_tokens: 1 } })}\n\n`);
  }
}

/** Float32 LE mono at 24 kHz, `SPEECH_MS_PER_CHAR` per character of text: a 440 Hz tone at half scale, or silence. */
export function fakeSpeechPcm(text: string, signal: 'tone' | 'silence'): Float32Array {
  const samples = Math.round((text.length * SPEECH_MS_PER_CHAR * FAKE_SPEECH_SAMPLE_RATE) / 1000);
  const pcm = new Float32Array(samples);
  if (signal === 'tone') for (let i = 0; i < samples; i++) pcm[i] = 0.5 * Math.sin((2 * Math.PI * 440 * i) / FAKE_SPEECH_SAMPLE_RATE);
  return pcm;
}

export function fakeSpeechDurationMs(text: string): number {
  return text.length * SPEECH_MS_PER_CHAR;
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
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

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MISTRAL_TTS_VOICE } from '../../adapters/voice/mistral-speaker.ts';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { oggOpusStream } from './ogg-opus-writer.ts';
import { answerRateLimited, ServiceBehaviourSet } from './fake-behaviours.ts';
import { refuseHttpRequest } from './mistral-contract.ts';

/**
 * The speech half of the Voxtral fake (FakeVoxtral extends it): `POST /v1/audio/speech`, streamed
 * (server-sent events) or not (JSON), and `GET /v1/audio/voices`, in the wire formats the real
 * `@mistralai/mistralai` SDK parses. It plays the speech behaviours of service-behaviours.ts
 * (`speech-raw-opus`, `speech-opus-refused`, `speech-slow-first-packet`, `unknown-voice`, `rate-limited`).
 */

export interface SpeechRequestRecord {
  body: Record<string, unknown>;
  authorization: string | undefined;
  /** The connection closed before the whole answer was sent (the client aborted). */
  closedEarly: boolean;
  /** The answer was sent in full. */
  completed: boolean;
  /** The HTTP status it was answered with (200 for a stream), once answered. */
  status?: number;
}

export interface VoicesRequestRecord {
  query: Record<string, string>;
  authorization: string | undefined;
  status: number;
}

/** Float32 PCM at 24 kHz: what Mistral's `response_format: "pcm"` returns. */
export const FAKE_SPEECH_SAMPLE_RATE = 24_000;
/** The voices the fake lists unless told: the runtime's default voice among them. */
export const FAKE_VOICES: readonly string[] = [MISTRAL_TTS_VOICE, 'fr_marie_happy', 'en_paul_neutral'];
/** `speech-slow-first-packet`: how long an Opus answer's first delta is held. */
export const SLOW_FIRST_PACKET_MS = 2_000;
/** Audio per character of input: a sentence's length decides its duration. */
const SPEECH_MS_PER_CHAR = 60;
/** Each server-sent event of PCM carries this much audio. */
const SPEECH_DELTA_MS = 100;
/** Ogg bytes per Opus delta: about 200 ms of the tone's packets, not a whole number of pages. */
const OPUS_DELTA_BYTES = 700;
/** The fake's Opus packets: 20 ms each. */
const OPUS_PACKET_MS = 20;
/** What a service answering `opus` in another container sends: an MP3's ID3 tag. */
const NOT_OGG = new TextEncoder().encode('ID3 not an Ogg stream');
const SPEECH_DONE = `event: speech.audio.done\ndata: ${JSON.stringify({ type: 'speech.audio.done', usage: { prompt_tokens: 1, total_tokens: 1 } })}\n\n`;

export class FakeVoxtralSpeech {
  /** The service behaviours switched on (service-behaviours.ts); this half plays the speech ones and `rate-limited`. */
  readonly behaviours = new ServiceBehaviourSet();
  /** The voices `GET /v1/audio/voices` lists (slugs; each also has an id); speech with another `voice_id` answers 404. */
  voices: string[] = [...FAKE_VOICES];
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
  /** `response_format: "opus"` in an Ogg stream, or bytes in another container (an MP3's). `speech-raw-opus` overrides both. */
  speechOpus: 'ogg' | 'not-ogg' = 'ogg';
  /** The `Retry-After` of `rate-limited`'s 429s: seconds, or an HTTP date. */
  rateLimitRetryAfter = '1';
  /** `GET /v1/audio/voices`: an HTTP status, or 'hang' for a request never answered. */
  voicesStatus: number | 'hang' = 200;
  readonly speechRequests: SpeechRequestRecord[] = [];
  readonly voicesRequests: VoicesRequestRecord[] = [];

  /** The HTTP side; true when the request was one of the speech endpoints. A request off Mistral's contract is refused first (422). */
  request(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): boolean {
    if (refuseHttpRequest(req, res, body)) return true;
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method === 'GET' && url.pathname === '/v1/audio/voices') {
      this.voicesList(Object.fromEntries(url.searchParams), req.headers.authorization, res);
      return true;
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/audio/speech') return false;
    const record: SpeechRequestRecord = { body, authorization: req.headers.authorization, closedEarly: false, completed: false };
    this.speechRequests.push(record);
    res.once('close', () => (record.closedEarly = !record.completed));
    void this.speech(body, res, record);
    return true;
  }

  /** The voices listed now: under `unknown-voice`, the runtime's configured (default) voice is not among them. */
  private knownVoices(): string[] {
    return this.behaviours.has('unknown-voice') ? this.voices.filter((v) => v !== MISTRAL_TTS_VOICE) : this.voices;
  }

  private voicesList(query: Record<string, string>, authorization: string | undefined, res: ServerResponse): void {
    const record: VoicesRequestRecord = { query, authorization, status: 200 };
    this.voicesRequests.push(record);
    if (this.voicesStatus === 'hang') return;
    const answer = (status: number, body: unknown) => {
      record.status = status;
      sendJson(res, status, body);
    };
    if (this.behaviours.rateLimits('voices')) {
      record.status = 429;
      return answerRateLimited(res, this.rateLimitRetryAfter);
    }
    if (this.voicesStatus !== 200) return answer(this.voicesStatus, serviceError('voices service unavailable', 'server_error'));
    const limit = Number(query.limit ?? 10);
    const offset = Number(query.offset ?? 0);
    const known = this.knownVoices();
    answer(200, {
      items: known.slice(offset, offset + limit).map(voiceResponse),
      total: known.length,
      page: Math.floor(offset / limit) + 1,
      page_size: limit,
      total_pages: Math.ceil(known.length / limit),
    });
  }

  private async speech(body: Record<string, unknown>, res: ServerResponse, record: SpeechRequestRecord): Promise<void> {
    if (this.behaviours.rateLimits('speech')) {
      record.completed = true;
      record.status = 429;
      return answerRateLimited(res, this.rateLimitRetryAfter);
    }
    if (this.speechStatus === 'hang') return;
    await sleep(this.speechLatencyMs);
    if (res.destroyed) return;
    const refuse = (status: number, answer: unknown) => {
      record.status = status;
      sendJson(res, status, answer);
      record.completed = true;
    };
    if (this.speechStatus !== 200) return refuse(this.speechStatus, serviceError('speech service unavailable', 'server_error'));
    const voice = body.voice_id;
    if (typeof voice === 'string' && !this.knownVoices().some((v) => v === voice || voiceId(v) === voice)) {
      return refuse(404, serviceError(`Voice '${voice}' not found`, 'invalid_request_error', 'voice_id'));
    }
    const formats = this.behaviours.has('speech-opus-refused') ? ['pcm'] : ['pcm', 'opus'];
    const format = body.response_format as string;
    // This fake's own limits: a text to speak, and Opus streamed only.
    if (body.input === '' || !formats.includes(format) || (format === 'opus' && body.stream !== true)) {
      return refuse(422, { detail: [{ loc: ['body', 'response_format'], msg: `input and response_format ${formats.map((f) => `"${f}"`).join(' or ')} (opus streamed) are required here`, type: 'value_error' }] });
    }
    const text = body.input as string;
    if (format === 'opus') return this.stream(res, record, this.opusDeltas(text), this.behaviours.has('speech-slow-first-packet') ? SLOW_FIRST_PACKET_MS : 0);
    const pcm = fakeSpeechPcm(text, this.speechSignal);
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    if (body.stream !== true) {
      record.status = 200;
      sendJson(res, 200, { audio_data: bytes.toString('base64') });
      record.completed = true;
      return;
    }
    const perDelta = (FAKE_SPEECH_SAMPLE_RATE * SPEECH_DELTA_MS * 4) / 1000;
    const deltas: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += perDelta) deltas.push(bytes.subarray(at, at + perDelta));
    return this.stream(res, record, { deltas, msEach: SPEECH_DELTA_MS }, 0);
  }

  /**
   * `response_format: "opus"`: the tone encoded by libopus (@evan/opus, 24 kHz, 20 ms packets), one packet
   * a delta under `speech-raw-opus`; otherwise an Ogg Opus stream cut into deltas of `OPUS_DELTA_BYTES`
   * that straddle its pages (or, `speechOpus: 'not-ogg'`, bytes in another container).
   */
  private opusDeltas(text: string): { deltas: Uint8Array[]; msEach: number } {
    if (this.behaviours.has('speech-raw-opus')) return { deltas: fakeSpeechPackets(text, this.speechSignal), msEach: OPUS_PACKET_MS };
    const ogg = this.speechOpus === 'not-ogg' ? NOT_OGG : fakeSpeechOgg(text, this.speechSignal);
    const deltas: Uint8Array[] = [];
    for (let at = 0; at < ogg.length; at += OPUS_DELTA_BYTES) deltas.push(ogg.subarray(at, at + OPUS_DELTA_BYTES));
    return { deltas, msEach: fakeSpeechDurationMs(text) / deltas.length };
  }

  /** Server-sent `speech.audio.delta` events, the first after `firstDelayMs`, then `speech.audio.done`; `speechFault` cuts it after its audio. */
  private async stream(res: ServerResponse, record: SpeechRequestRecord, audio: { deltas: Uint8Array[]; msEach: number }, firstDelayMs: number): Promise<void> {
    record.status = 200;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    await sleep(firstDelayMs);
    const fault = this.speechFault;
    for (let i = 0; i < audio.deltas.length; i++) {
      if (res.destroyed) return;
      if (fault && i * audio.msEach >= fault.afterMs) {
        // Cut once what went out has left, so the client has read it before the connection dies.
        if (fault.kind === 'drop') res.write(':\n\n', () => res.socket?.destroy());
        return;
      }
      const audio_data = Buffer.from(audio.deltas[i]!).toString('base64');
      res.write(`event: speech.audio.delta\ndata: ${JSON.stringify({ type: 'speech.audio.delta', audio_data })}\n\n`);
      await sleep(this.speechDeltaIntervalMs);
    }
    if (res.destroyed) return;
    record.completed = true;
    res.end(SPEECH_DONE);
  }
}

/** Mistral's error body (docs: error glossary). */
function serviceError(message: string, type: string, param: string | null = null): Record<string, unknown> {
  return { object: 'error', message, type, param, code: null };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A voice's id: a UUID, as the service gives its preset voices beside their slugs (either is accepted as `voice_id`). */
export function voiceId(slug: string): string {
  const h = createHash('sha256').update(slug).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** One item of the voice list, in the SDK's `VoiceResponse` wire shape. */
function voiceResponse(slug: string): Record<string, unknown> {
  const [language = 'fr', speaker = slug, mood = 'neutral'] = slug.split('_');
  return {
    id: voiceId(slug),
    name: `${speaker[0]!.toUpperCase()}${speaker.slice(1)} ${mood}`,
    slug,
    languages: [language === 'en' ? 'en_us' : `${language}_${language}`],
    gender: null,
    age: null,
    tags: [mood],
    color: null,
    description: null,
    retention_notice: 30,
    created_at: '2026-03-23T00:00:00Z',
    user_id: null,
  };
}

/** The fake's speech as `response_format: "opus"` gives it: 20 ms packets (the tone's length is a whole number of them) in Ogg pages of five. */
export function fakeSpeechOgg(text: string, signal: 'tone' | 'silence'): Uint8Array {
  return oggOpusStream(fakeSpeechPackets(text, signal), { inputSampleRate: FAKE_SPEECH_SAMPLE_RATE, packetsPerPage: 5 });
}

/** The Opus packets inside `fakeSpeechOgg`. */
export function fakeSpeechPackets(text: string, signal: 'tone' | 'silence'): Uint8Array[] {
  const pcm = fakeSpeechPcm(text, signal);
  const encoder = opusCodec().encoder(FAKE_SPEECH_SAMPLE_RATE);
  try {
    const packets: Uint8Array[] = [];
    const frame = new Int16Array(encoder.frameSamples);
    for (let at = 0; at < pcm.length; at += frame.length) {
      frame.fill(0);
      for (let i = 0; i < frame.length && at + i < pcm.length; i++) frame[i] = Math.round(pcm[at + i]! * 32767);
      packets.push(encoder.encode(frame));
    }
    return packets;
  } finally {
    encoder.close();
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

import { Mistral } from '@mistralai/mistralai';
import { MistralError } from '@mistralai/mistralai/models/errors';
import { CompleteAcceptEnum } from '@mistralai/mistralai/sdk/speech.js';
import type { Logger } from 'pino';
import { OggOpusError } from '../../machines/voice/ogg-opus.ts';
import { OpusAnswerError, OpusAnswerReader } from '../../machines/voice/opus-answer.ts';
import type { SpeakerPort, SpeechPiece } from '../../machines/voice/voice.port.ts';
import { Float32LeDecoder } from '../../machines/voice/resample.ts';
import { mistralSdkServerUrl, type KohamiEnv } from '../mistral/base-url.ts';
import { ProviderPause, retryAfterMs, throttleMs } from '../mistral/retry-after.ts';
import { opusCodec } from './opus-codec.ts';

export const MISTRAL_TTS_MODEL = 'voxtral-mini-tts-2603';
export const MISTRAL_TTS_VOICE = 'fr_marie_neutral';
/** `response_format: "pcm"` is float32 little-endian mono at 24 kHz. */
export const MISTRAL_TTS_SAMPLE_RATE = 24_000;

/**
 * An Opus answer whose first packet comes later than this makes the next sentences ask for PCM. PCM's
 * first audio is documented at ~0.7–0.8 s; Opus saves the runtime an encode, not the senior any wait,
 * so an Opus stream slower than PCM would be by 0.4 s is not worth it. It stays under the fallback
 * speaker's 1.5 s first-audio bound so that the slowness is learnt even when the fallback then takes
 * the sentence (espeak-ng speaks it: it is not lost).
 */
export const OPUS_FIRST_PACKET_MS = 1_200;
/**
 * After a 404 (the voice, or the model, unknown to the service) no sentence is asked of it for this
 * long: each would cost a failed request before espeak-ng speaks it. Then it is asked again, in case
 * the 404 was the service's moment rather than the setting.
 */
export const UNKNOWN_VOICE_PAUSE_MS = 5 * 60_000;
/** The voice check at start is given up after this long in all (the service unreachable or slow): the runtime starts anyway. */
export const VOICE_CHECK_MS = 2_000;
/** The voice list is read in pages of this many, at most `MAX_VOICE_PAGES` of them. */
const VOICES_PER_PAGE = 100;
const MAX_VOICE_PAGES = 10;

/** What `GET /v1/audio/voices` said of the configured voice: listed, not listed (with the voices that are), or nothing (why). */
/** `unchecked` with `rateLimited`: the list was answered 429, with the wait it asked for if it named one. */
export type VoiceCheck = { kind: 'listed' } | { kind: 'unknown'; voices: string[] } | { kind: 'unchecked'; reason: string; rateLimited?: { retryAfterMs: number | undefined } };

/** The speech service failed (HTTP error, stalled or broken stream). */
export class SpeechServiceError extends Error {
  override name = 'SpeechServiceError';
}

export interface MistralSpeakerOptions {
  apiKey: string;
  /** MISTRAL_BASE_URL, checked against INV-T02 here, at construction. */
  baseUrl: string;
  env: KohamiEnv;
  /** MISTRAL_TTS_MODEL. */
  model?: string;
  /** MISTRAL_TTS_VOICE. */
  voice?: string;
  /**
   * Bound on the service's silence: the wait for the first audio, then for each next delta once the
   * consumer asks for it (its own pauses do not count). Default 3,000 ms.
   */
  stallMs?: number;
  /** Bound on an Opus answer's first packet (default `OPUS_FIRST_PACKET_MS`); past it, the next sentences ask for PCM. */
  opusFirstPacketMs?: number;
  /** Where a 404, a 429 and the end of Opus are told (never a sentence's text). */
  logger?: Logger;
}

/**
 * SpeakerPort over Mistral's speech endpoint through the official SDK (`audio.speech.complete`,
 * `stream: true`): server-sent `speech.audio.delta` events of float32 PCM, yielded as s16 as they
 * arrive, one request per sentence; or, for an Opus kiosk, of Opus, yielded as its packets. It honours
 * what the service answers: a 429's Retry-After (or a 503's) and a 404 pause its requests (each sentence
 * meanwhile fails at once, and the fallback speaker speaks it), an unreadable or slow Opus turns it to PCM.
 */
export class MistralSpeaker implements SpeakerPort {
  readonly sampleRate = MISTRAL_TTS_SAMPLE_RATE;
  readonly voiceId: string;
  private readonly client: Mistral;
  private readonly model: string;
  private readonly voice: string;
  private readonly stallMs: number;
  private readonly opusFirstPacketMs: number;
  private readonly logger: Logger | undefined;
  /** Why Opus is no longer asked for (PCM from then on, for the process), or null while it is. */
  private opusOff: string | null = null;
  /** No request leaves before this pause is over (a 429's Retry-After, a 404). */
  private readonly pause = new ProviderPause();
  private pauseReason = '';

  constructor(options: MistralSpeakerOptions) {
    const serverURL = mistralSdkServerUrl(options.baseUrl, options.env);
    // No SDK retries: a retried sentence arrives too late to be worth hearing; the fallback speaks it instead.
    this.client = new Mistral({ apiKey: options.apiKey, serverURL, retryConfig: { strategy: 'none' } });
    this.model = options.model ?? MISTRAL_TTS_MODEL;
    this.voice = options.voice ?? MISTRAL_TTS_VOICE;
    this.voiceId = `mistral:${this.model}:${this.voice}`;
    this.stallMs = options.stallMs ?? 3_000;
    this.opusFirstPacketMs = options.opusFirstPacketMs ?? OPUS_FIRST_PACKET_MS;
    this.logger = options.logger;
  }

  /** Ends quietly when `signal` aborts (the request is aborted with it); throws SpeechServiceError on a service failure. */
  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    // float32 samples may straddle two deltas: the decoder keeps the odd bytes for the next one.
    const decoder = new Float32LeDecoder();
    for await (const bytes of this.deltas(text, 'pcm', signal)) {
      const pcm = decoder.push(bytes);
      if (pcm.length > 0) yield pcm;
    }
  }

  /**
   * `response_format: "opus"`, its container told from the first delta (`OpusAnswerReader`): an Ogg
   * Opus stream is demuxed, raw packets are taken as they come, each packet's TOC read. If what comes
   * back is not Opus the kiosk can take (another container, a stream that cannot be read, the request
   * refused as invalid) before any packet came, this sentence and every next one are asked for as PCM
   * (the reply encodes it). A first packet later than `opusFirstPacketMs` makes the next sentences ask
   * for PCM; this one is still awaited (the fallback speaker decides what the senior hears meanwhile).
   */
  async *synthesizeOpus(text: string, signal: AbortSignal): AsyncIterable<SpeechPiece> {
    if (this.opusOff === null) {
      const reader = new OpusAnswerReader(decodable);
      let packets = 0;
      const slow = setTimeout(() => this.stopOpus(`its first Opus packet took over ${this.opusFirstPacketMs} ms`), this.opusFirstPacketMs);
      try {
        for await (const bytes of this.deltas(text, 'opus', signal)) {
          for (const packet of reader.push(bytes)) {
            clearTimeout(slow);
            packets += 1;
            yield packet;
          }
          if (reader.kind === 'other') break;
        }
        if (signal.aborted || text.trim() === '') return;
        if (reader.kind !== 'other') {
          reader.end();
          return;
        }
        this.stopOpus('its answer to "opus" is not Opus (another container)');
      } catch (err) {
        const unreadable = err instanceof OggOpusError || err instanceof OpusAnswerError;
        if (!unreadable && !formatRefused(err)) throw err;
        if (packets > 0) throw new SpeechServiceError(`speech request failed: ${(err as Error).message}`, { cause: err });
        this.stopOpus(unreadable ? `its Opus cannot be read (${(err as Error).message})` : 'it refused "opus"');
      } finally {
        clearTimeout(slow);
      }
    }
    yield* this.synthesize(text, signal);
  }

  /**
   * Whether the service lists the configured voice (by slug or id), asked once at start: `GET
   * /v1/audio/voices` page by page, within `timeoutMs` in all. A 429 starts the pause its Retry-After
   * asks for, as a sentence's would (a 404 here is the list's, not the voice's: no pause).
   */
  async checkVoice(timeoutMs = VOICE_CHECK_MS): Promise<VoiceCheck> {
    const request = new AbortController();
    const timer = setTimeout(() => request.abort(), timeoutMs);
    const listed: string[] = [];
    try {
      for (let page = 0; page < MAX_VOICE_PAGES; page++) {
        const list = await this.client.audio.voices.list({ limit: VOICES_PER_PAGE, offset: listed.length }, { signal: request.signal });
        for (const voice of list.items) {
          if (voice.slug === this.voice || voice.id === this.voice) return { kind: 'listed' };
          listed.push(voice.slug ?? voice.id);
        }
        if (list.items.length === 0 || listed.length >= list.total) return { kind: 'unknown', voices: listed };
      }
      return { kind: 'unchecked', reason: `the service lists over ${MAX_VOICE_PAGES * VOICES_PER_PAGE} voices` };
    } catch (err) {
      if (err instanceof MistralError) this.noteRetryAfter(err);
      if (request.signal.aborted) return { kind: 'unchecked', reason: `no answer within ${timeoutMs} ms` };
      if (!(err instanceof MistralError)) return { kind: 'unchecked', reason: (err as Error).message };
      const unchecked = { kind: 'unchecked' as const, reason: `HTTP ${err.statusCode}` };
      if (err.statusCode !== 429) return unchecked;
      return { ...unchecked, rateLimited: { retryAfterMs: retryAfterMs(Object.fromEntries(err.headers)) ?? undefined } };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Opus is given up for the process: told once. */
  private stopOpus(reason: string): void {
    if (this.opusOff !== null) return;
    this.opusOff = reason;
    this.logger?.warn({ reason }, 'speech: sentences are asked of the service as PCM from now on (encoded by the runtime for Opus kiosks)');
  }

  /** A 429 (or a 503 that says when to come back) pauses every request for its Retry-After, capped; told in the log. */
  private noteRetryAfter(err: MistralError): void {
    const pauseMs = this.pause.note(throttleMs(err.statusCode, Object.fromEntries(err.headers)));
    if (pauseMs === null) return;
    this.pauseReason = `told to wait (HTTP ${err.statusCode})`;
    this.logger?.warn({ status: err.statusCode, pauseMs }, 'speech service told to wait: sentences are spoken by espeak-ng until its Retry-After has passed');
  }

  /** A 404 on a sentence: the voice (or the model) unknown to the service; no request for `UNKNOWN_VOICE_PAUSE_MS`, told in the log. */
  private noteUnknownVoice(): void {
    this.pause.note(UNKNOWN_VOICE_PAUSE_MS);
    this.pauseReason = `voice ${this.voice} unknown (HTTP 404)`;
    this.logger?.error(
      { status: 404, voice: this.voice, model: this.model, pauseMs: UNKNOWN_VOICE_PAUSE_MS },
      'speech service does not know the voice (or the model): sentences are spoken by espeak-ng, the service is asked again after the pause; set MISTRAL_TTS_VOICE to a voice GET /v1/audio/voices lists',
    );
  }

  /** The decoded bytes of each `speech.audio.delta`, as they arrive; ends quietly when `signal` aborts. */
  private async *deltas(text: string, responseFormat: 'pcm' | 'opus', signal: AbortSignal): AsyncIterable<Buffer> {
    if (signal.aborted || text.trim() === '') return;
    const pausedMs = this.pause.leftMs;
    if (pausedMs > 0) throw new SpeechServiceError(`speech service not asked for ${pausedMs} ms more: ${this.pauseReason}`);
    const request = new AbortController();
    const stop = () => request.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    let stalled = false;
    const arm = () => setTimeout(() => ((stalled = true), request.abort()), this.stallMs);
    let timer = arm();
    try {
      const events = await this.client.audio.speech.complete(
        { model: this.model, input: text, voiceId: this.voice, responseFormat, stream: true },
        { signal: request.signal, acceptHeaderOverride: CompleteAcceptEnum.textEventStream },
      );
      for await (const event of events) {
        // The bound is on the service's silence only: while the consumer holds this generator at a
        // `yield` (a slow kiosk draining its audio), no clock runs against the service.
        clearTimeout(timer);
        const data = event.data;
        if (data.type === 'speech.audio.done') break;
        if (data.type === 'speech.audio.delta' && 'audioData' in data) yield Buffer.from(data.audioData, 'base64');
        timer = arm();
      }
    } catch (err) {
      if (signal.aborted) return;
      if (stalled) throw new SpeechServiceError(`no speech audio for ${this.stallMs} ms`);
      if (err instanceof MistralError) {
        if (err.statusCode === 404) this.noteUnknownVoice();
        else this.noteRetryAfter(err);
      }
      throw new SpeechServiceError(`speech request failed: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      // The consumer may stop early (break, barge-in): the request must not keep streaming.
      request.abort();
    }
  }
}

const codec = opusCodec();
/** Whether libopus, the kiosk's decoder, takes `packet` (a raw Opus answer's first packet is tried once). */
export function decodable(packet: Uint8Array): boolean {
  const decoder = codec.decoder(MISTRAL_TTS_SAMPLE_RATE);
  try {
    decoder.decode(packet);
    return true;
  } catch {
    return false;
  } finally {
    decoder.close();
  }
}

/** The service refused the request itself (400, 422: the Opus format, say), not a fault of the moment. */
function formatRefused(err: unknown): boolean {
  const status = err instanceof SpeechServiceError && err.cause instanceof MistralError ? err.cause.statusCode : undefined;
  return status === 400 || status === 422;
}

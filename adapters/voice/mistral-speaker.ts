import { Mistral } from '@mistralai/mistralai';
import { CompleteAcceptEnum } from '@mistralai/mistralai/sdk/speech.js';
import { OggOpusDemuxer, OggOpusError } from '../../machines/voice/ogg-opus.ts';
import type { SpeakerPort, SpeechPiece } from '../../machines/voice/voice.port.ts';
import { Float32LeDecoder } from '../../machines/voice/resample.ts';
import { mistralSdkServerUrl, type KohamiEnv } from '../mistral/base-url.ts';

export const MISTRAL_TTS_MODEL = 'voxtral-mini-tts-2603';
export const MISTRAL_TTS_VOICE = 'fr_marie_neutral';
/** `response_format: "pcm"` is float32 little-endian mono at 24 kHz. */
export const MISTRAL_TTS_SAMPLE_RATE = 24_000;

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
}

/**
 * SpeakerPort over Mistral's speech endpoint through the official SDK (`audio.speech.complete`,
 * `stream: true`): server-sent `speech.audio.delta` events of float32 PCM, yielded as s16 as
 * they arrive, one request per sentence; or, for an Opus kiosk, of Ogg Opus, yielded as its packets. The SDK streams on Node 20 (fetch + ReadableStream).
 */
export class MistralSpeaker implements SpeakerPort {
  readonly sampleRate = MISTRAL_TTS_SAMPLE_RATE;
  readonly voiceId: string;
  private readonly client: Mistral;
  private readonly model: string;
  private readonly voice: string;
  private readonly stallMs: number;
  /** The service's Opus could not be read once: PCM from then on. */
  private opusRefused = false;

  constructor(options: MistralSpeakerOptions) {
    const serverURL = mistralSdkServerUrl(options.baseUrl, options.env);
    // No SDK retries: a retried sentence arrives too late to be worth hearing; the fallback speaks it instead.
    this.client = new Mistral({ apiKey: options.apiKey, serverURL, retryConfig: { strategy: 'none' } });
    this.model = options.model ?? MISTRAL_TTS_MODEL;
    this.voice = options.voice ?? MISTRAL_TTS_VOICE;
    this.voiceId = `mistral:${this.model}:${this.voice}`;
    this.stallMs = options.stallMs ?? 3_000;
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
   * `response_format: "opus"`: the deltas are one Ogg Opus stream (RFC 7845), demuxed into its packets
   * as they arrive. If the service's Opus cannot be read before any packet came (not Ogg, a stream
   * the demuxer refuses, the request refused as invalid), this sentence and every next one are asked for as PCM instead (the reply
   * encodes it): a format the service changed costs one request, not every sentence's audio.
   */
  async *synthesizeOpus(text: string, signal: AbortSignal): AsyncIterable<SpeechPiece> {
    if (!this.opusRefused) {
      const demuxer = new OggOpusDemuxer();
      let packets = 0;
      try {
        for await (const bytes of this.deltas(text, 'opus', signal)) {
          for (const packet of demuxer.push(bytes)) {
            packets += 1;
            yield packet;
          }
        }
        if (signal.aborted || text.trim() === '') return;
        demuxer.end();
        return;
      } catch (err) {
        const unreadable = err instanceof OggOpusError;
        if (!unreadable && !formatRefused(err)) throw err;
        if (packets > 0) throw new SpeechServiceError(`speech request failed: ${(err as Error).message}`, { cause: err });
        this.opusRefused = true;
      }
    }
    yield* this.synthesize(text, signal);
  }

  /** The decoded bytes of each `speech.audio.delta`, as they arrive; ends quietly when `signal` aborts. */
  private async *deltas(text: string, responseFormat: 'pcm' | 'opus', signal: AbortSignal): AsyncIterable<Buffer> {
    if (signal.aborted || text.trim() === '') return;
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
      throw new SpeechServiceError(`speech request failed: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      // The consumer may stop early (break, barge-in): the request must not keep streaming.
      request.abort();
    }
  }
}

/** The service refused the request itself (400, 422: the Opus format, say), not a fault of the moment. */
function formatRefused(err: unknown): boolean {
  const status = err instanceof SpeechServiceError ? (err.cause as { statusCode?: unknown } | undefined)?.statusCode : undefined;
  return status === 400 || status === 422;
}

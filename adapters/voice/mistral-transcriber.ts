import type { Logger } from 'pino';
import { mistralSdkServerUrl, type KohamiEnv } from '../mistral/base-url.ts';
import type { TranscriberPort, TranscriptionStream } from '../../machines/voice/voice.port.ts';
import { MistralTranscriptionStream } from './transcription-stream.ts';
import { flushAnswerMsFor, IDLE_CLOSE_MS, SessionFields, TRANSCRIBER_RECONNECT, type FlushMode, type SocketCounter, type StreamSettings, type TranscriptionServiceEvent } from './transcription-settings.ts';

export const MISTRAL_STT_MODEL = 'voxtral-mini-transcribe-realtime-2602';

export { flushAnswerMsFor, SETUP_GRACE_MS, TranscriberUnavailableError, TRANSCRIBER_RECONNECT, VOXTRAL_STREAMING_DELAY_MS, type FlushMode, type SocketCounter, type TranscriptionServiceEvent } from './transcription-settings.ts';

export interface MistralTranscriberOptions {
  apiKey: string;
  /** MISTRAL_BASE_URL, checked against INV-T02 here, at construction. */
  baseUrl: string;
  env: KohamiEnv;
  /** MISTRAL_STT_MODEL. */
  model?: string;
  /** STT_LANGUAGE: sent as `session.update`'s `language`, which the API does not document. Unset: not sent. */
  language?: string;
  /** STT_CONTEXT_BIAS: the senior's names sent as `context_bias`, which the API does not document. Default false. */
  contextBias?: boolean;
  /** Bound on one connection attempt (socket, `session.created`, the set-up). Default 2,000 ms. */
  connectTimeoutMs?: number;
  /** `target_streaming_delay_ms`: how far behind the audio interim words come (80–1200); the service's own (VOXTRAL_STREAMING_DELAY_MS) when unset. */
  streamingDelayMs?: number;
  /** Bound on a flush, whatever the caller's signal. Default 5,000 ms; the runtime passes STT_BUDGET_MS, its one bound. */
  flushTimeoutMs?: number;
  /**
   * STT_FLUSH_ANSWER_MS: a flush with no answer this long ends its socket (`input_audio.end`, whose answer
   * may still bring the text); no answer after as long again, the utterance goes on a fresh socket, whose
   * flush has as long before it is ended too. Default flushAnswerMsFor(flushTimeoutMs).
   */
  flushAnswerMs?: number;
  /**
   * STT_FLUSH_MODE: `flush` (the default) flushes the socket at each end of speech and keeps it; `end`
   * ends it (`input_audio.end`, whose answer is the final text) and opens the next one at once — for a
   * service that leaves flushes unanswered or answers them late (`mistral:check` says which).
   */
  flushMode?: FlushMode;
  /** STT_IDLE_CLOSE_MS: a socket that carried no audio this long is closed (the service ends idle ones at 30 s). Default 20,000 ms. */
  idleCloseMs?: number;
  /**
   * An open socket is pinged this often; one whose pong has not come back by the next ping is dead
   * (a network cut leaves no close behind) and is replaced at once, so the senior's next sentence
   * does not go into it. Default 10,000 ms: a dead socket is found within 20 s of dying.
   */
  keepAliveMs?: number;
  /** Failed connection attempts in a row before a (re)connection gives up. Default 3. */
  connectAttempts?: number;
  /**
   * Reconnect back-off: after the k-th socket lost since the last healthy one, a wait of
   * `backoffMs × 2^(k−1)` (at most `maxBackoffMs`), jittered down to half of it. The count carries
   * across sockets the service accepted and then dropped (or errored on, or the network cut), and
   * across failed connects alike; a socket the stream ended or closed itself is no loss. It resets
   * only once a socket has been healthy (it delivered a transcript, or stayed open `healthyAfterMs`).
   * Defaults 100 ms, 2,000 ms, 10,000 ms. An upgrade refused with 429 waits its `Retry-After` instead
   * (at most `flushTimeoutMs`).
   */
  backoffMs?: number;
  maxBackoffMs?: number;
  healthyAfterMs?: number;
  /**
   * Sockets lost (or connects failed) without a healthy one in between, beyond which the stream gives
   * up: the utterance's flush (pending or next) fails with TranscriberUnavailableError and the stream
   * opens no socket again. Default 5: at most 6 sockets lost per stream and utterance, whatever the
   * service does (the stream's own ends of unanswered flushes add at most a few, bounded by the flush's).
   */
  maxReconnects?: number;
  logger?: Logger;
  /** Told of every socket to the service as it opens and as it closes (the runtime's open-sockets gauge). */
  sockets?: SocketCounter;
  /** Told of each departure from the documented contract the stream worked around (the runtime's counters). */
  onServiceEvent?: (event: TranscriptionServiceEvent) => void;
}

/** Names the recognizer should favour: trimmed, unique, bounded (Mistral caps the list; a long one only slows it). */
const MAX_CONTEXT_BIAS = 100;
const MAX_CONTEXT_BIAS_CHARS = 100;

/** TranscriberPort over Voxtral realtime (the `@mistralai/mistralai` SDK's realtime connection), one stream per session. */
export class MistralTranscriber implements TranscriberPort {
  private readonly settings: StreamSettings;

  constructor(options: MistralTranscriberOptions) {
    const serverUrl = mistralSdkServerUrl(options.baseUrl, options.env);
    const flushTimeoutMs = options.flushTimeoutMs ?? 5_000;
    this.settings = {
      serverUrl,
      apiKey: options.apiKey,
      model: options.model ?? MISTRAL_STT_MODEL,
      live: { fragments: false },
      flushMode: options.flushMode ?? 'flush',
      fields: new SessionFields({ language: options.language, contextBias: options.contextBias === true, logger: options.logger, onServiceEvent: options.onServiceEvent }),
      ...(options.streamingDelayMs !== undefined ? { streamingDelayMs: options.streamingDelayMs } : {}),
      connectTimeoutMs: options.connectTimeoutMs ?? 2_000,
      flushTimeoutMs,
      flushAnswerMs: options.flushAnswerMs ?? flushAnswerMsFor(flushTimeoutMs),
      idleCloseMs: options.idleCloseMs ?? IDLE_CLOSE_MS,
      keepAliveMs: options.keepAliveMs ?? 10_000,
      connectAttempts: options.connectAttempts ?? TRANSCRIBER_RECONNECT.connectAttempts,
      backoffMs: options.backoffMs ?? TRANSCRIBER_RECONNECT.backoffMs,
      maxBackoffMs: options.maxBackoffMs ?? TRANSCRIBER_RECONNECT.maxBackoffMs,
      healthyAfterMs: options.healthyAfterMs ?? TRANSCRIBER_RECONNECT.healthyAfterMs,
      maxReconnects: options.maxReconnects ?? TRANSCRIBER_RECONNECT.maxReconnects,
      logger: options.logger,
      sockets: options.sockets,
      onServiceEvent: options.onServiceEvent ?? (() => undefined),
    };
  }

  /** Resolves once the socket is open and configured; rejects (TranscriberUnavailableError) when it cannot be, or at once on `signal`. */
  async open(options: { contextBias: string[]; signal: AbortSignal }): Promise<TranscriptionStream> {
    const { signal } = options;
    signal.throwIfAborted();
    const stream = new MistralTranscriptionStream(this.settings, normalizeContextBias(options.contextBias));
    let onAbort = () => {};
    try {
      await new Promise<unknown>((resolve, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        stream.connected().then(resolve, reject);
      });
      return stream;
    } catch (err) {
      stream.close();
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

function normalizeContextBias(words: string[]): string[] {
  const unique = new Set(words.map((w) => w.trim().slice(0, MAX_CONTEXT_BIAS_CHARS)).filter(Boolean));
  return [...unique].slice(0, MAX_CONTEXT_BIAS);
}


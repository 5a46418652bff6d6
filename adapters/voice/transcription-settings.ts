import type { Logger } from 'pino';

/* What the transcriber's streams share: its settings, what they learnt of the service, its errors and events. */

/** The service is out of reach (connection refused, handshake failed, reconnects exhausted) or answered an error. */
export class TranscriberUnavailableError extends Error {
  override name = 'TranscriberUnavailableError';
}

/**
 * What the stream worked around, beyond the documented contract (the runtime counts them): `setup_fallback`
 * (the service refused the undocumented settings: every set-up since carries the documented ones alone —
 * once per process), `no_session_updated` (a set-up went ahead on silence), `rate_limited` (an upgrade
 * answered 429), `cumulative_final` (a final repeated the socket's earlier ones), `flush_unanswered` (a
 * flush got no answer in time: its socket was ended), `flush_replayed`
 * (nor did the end: the utterance went on a fresh socket), `service_closed` (the service ended an idle
 * socket, or errored on one owing nothing).
 */
export type TranscriptionServiceEvent = 'setup_fallback' | 'no_session_updated' | 'rate_limited' | 'cumulative_final' | 'flush_unanswered' | 'flush_replayed' | 'service_closed';

/** STT_FLUSH_MODE: how an utterance's text is asked for — a flush of the socket, or its end. */
export type FlushMode = 'flush' | 'end';

/** Each `opened()` is followed, once the socket has closed (by either side, or cut), by exactly one `closed()`. */
export interface SocketCounter {
  opened(): void;
  closed(): void;
}

/** The reconnect policy's defaults (MistralTranscriberOptions says what each bounds). */
export const TRANSCRIBER_RECONNECT = { connectAttempts: 3, backoffMs: 100, maxBackoffMs: 2_000, healthyAfterMs: 10_000, maxReconnects: 5 } as const;

/** STT_FLUSH_ANSWER_MS's default: 600 ms, or a third of the flush's bound if that is less (the bound must hold every stage). */
export const flushAnswerMsFor = (flushTimeoutMs: number): number => Math.min(600, Math.floor(flushTimeoutMs / 3));
/** STT_IDLE_CLOSE_MS's default: well before the 30 s after which the service is reported to end a silent session. */
export const IDLE_CLOSE_MS = 20_000;
/**
 * A set-up whose `session.update` is neither acknowledged nor refused goes ahead this long after it was
 * sent: `session.updated` is reported never to come from some versions, and a refusal comes at once.
 */
export const SETUP_GRACE_MS = 250;

/** Voxtral realtime's own `target_streaming_delay_ms` when a session does not set one (where it matches offline Whisper). */
export const VOXTRAL_STREAMING_DELAY_MS = 480;

/**
 * The undocumented settings `session.update` may carry, shared by the process's streams: off unless the
 * operator turned them on (STT_LANGUAGE, STT_CONTEXT_BIAS), and dropped for good the first time the
 * service refuses a set-up that carried them — once for the process, said in the log and counted.
 */
export class SessionFields {
  private refused = false;
  private readonly options: { language: string | undefined; contextBias: boolean; logger: Logger | undefined; onServiceEvent: ((event: TranscriptionServiceEvent) => void) | undefined };

  constructor(options: SessionFields['options']) {
    this.options = options;
  }

  undocumented(names: string[]): Record<string, unknown> {
    const { language, contextBias } = this.options;
    if (this.refused) return {};
    return { ...(language ? { language } : {}), ...(contextBias && names.length > 0 ? { context_bias: names } : {}) };
  }

  refuse(reason: string): void {
    if (this.refused) return;
    this.refused = true;
    const fields = [...(this.options.language ? ['language'] : []), ...(this.options.contextBias ? ['context_bias'] : [])];
    this.options.logger?.warn({ fields, reason }, 'the transcription service refused a set-up with undocumented settings: every set-up now sends the documented ones alone');
    this.options.onServiceEvent?.('setup_fallback');
  }
}

export interface StreamSettings {
  serverUrl: string;
  apiKey: string;
  model: string;
  fields: SessionFields;
  /** What the process's streams have learnt of the service's live text: it sends words in pieces. */
  live: { fragments: boolean };
  /** STT_FLUSH_MODE: `end` ends each utterance's socket at once rather than flushing it. */
  flushMode: FlushMode;
  streamingDelayMs?: number;
  connectTimeoutMs: number;
  flushTimeoutMs: number;
  flushAnswerMs: number;
  idleCloseMs: number;
  keepAliveMs: number;
  connectAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  healthyAfterMs: number;
  maxReconnects: number;
  logger: Logger | undefined;
  sockets: SocketCounter | undefined;
  onServiceEvent: (event: TranscriptionServiceEvent) => void;
}

/** The reconnection's back-off: a stream closed meanwhile ends the wait as unavailable. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TranscriberUnavailableError('transcription stream closed'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

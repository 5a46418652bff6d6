import { AudioEncoding, type RealtimeConnection, type RealtimeEvent } from '@mistralai/mistralai/extra/realtime';
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import { mistralSdkServerUrl, type KohamiEnv } from '../mistral/base-url.ts';
import { INPUT_SAMPLE_RATE, TranscriptionTimeoutError, type TranscriberPort, type TranscriptionStream } from '../../machines/voice/voice.port.ts';
import { describeServiceError, dialRealtime, sessionUpdateMessage, UpgradeRefusedError, type RealtimeSocket } from './realtime-socket.ts';
import { continuesWord, readableLive, SocketFinals } from './transcript-text.ts';

export const MISTRAL_STT_MODEL = 'voxtral-mini-transcribe-realtime-2602';

/** The service is out of reach (connection refused, handshake failed, reconnects exhausted) or answered an error. */
export class TranscriberUnavailableError extends Error {
  override name = 'TranscriberUnavailableError';
}

/**
 * What the stream worked around, beyond the documented contract (the runtime counts them): `setup_fallback`
 * (the service refused the undocumented settings: every set-up since carries the documented ones alone —
 * once per process), `no_session_updated` (a set-up went ahead on silence), `rate_limited` (an upgrade
 * answered 429), `cumulative_final` (a final repeated the socket's earlier ones), `flush_unanswered` (a
 * flush got no answer in time: its socket was ended, and so is every utterance's since), `flush_replayed` (nor did the end: the utterance went
 * on a fresh socket), `service_closed` (the service ended an idle socket, or errored on one owing nothing).
 */
export type TranscriptionServiceEvent = 'setup_fallback' | 'no_session_updated' | 'rate_limited' | 'cumulative_final' | 'flush_unanswered' | 'flush_replayed' | 'service_closed';

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
   * ends it (`input_audio.end`, whose answer is the final text) and opens the next one at once. A stream
   * in `flush` mode that sees a flush left unanswered switches the whole transcriber to `end`.
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
/** A socket whose cumulative finals hold more words is replaced once it has answered (each final repeats them all). */
const MAX_SOCKET_WORDS = 300;
/** Names the recognizer should favour: trimmed, unique, bounded (Mistral caps the list; a long one only slows it). */
const MAX_CONTEXT_BIAS = 100;
const MAX_CONTEXT_BIAS_CHARS = 100;
/** Mistral decodes at most 262,144 bytes per `input_audio.append`. */
const MAX_APPEND_SAMPLES = 131_072;
/** Audio kept for replay after a drop: the longest utterance the listener lets through (30 s at 16 kHz). */
const MAX_BUFFERED_SAMPLES = 30 * INPUT_SAMPLE_RATE;
/**
 * Microphone audio leaves in appends of 100 ms, not one per analysis window (32 ms): each append is a
 * base64 string, a JSON message, a masked WebSocket frame and a socket write, and those were the
 * largest cost of the audio path after the detector. A flush sends what is batched first, so the end
 * of speech waits for nothing; interim text may come up to 100 ms later.
 */
const APPEND_BATCH_SAMPLES = INPUT_SAMPLE_RATE / 10;
const ignore = (): void => undefined;

/** Voxtral realtime's own `target_streaming_delay_ms` when a session does not set one (where it matches offline Whisper). */
export const VOXTRAL_STREAMING_DELAY_MS = 480;

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
      flushes: { mode: options.flushMode ?? 'flush' },
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
      onServiceEvent: options.onServiceEvent ?? ignore,
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

/**
 * The undocumented settings `session.update` may carry, shared by the process's streams: off unless the
 * operator turned them on (STT_LANGUAGE, STT_CONTEXT_BIAS), and dropped for good the first time the
 * service refuses a set-up that carried them — once for the process, said in the log and counted.
 */
class SessionFields {
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

interface StreamSettings {
  serverUrl: string;
  apiKey: string;
  model: string;
  fields: SessionFields;
  /** What the process's streams have learnt of the service's live text: it sends words in pieces. */
  live: { fragments: boolean };
  /** How an utterance is closed, and what the streams have learnt: once a flush goes unanswered, `end`. */
  flushes: { mode: FlushMode };
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

/** A flush waiting for its final text, and the sockets that owe it. */
interface Flush {
  resolve(text: string): void;
  reject(err: unknown): void;
  /** The utterance's audio, kept until its text arrives. */
  audio: Int16Array[];
  /** Sockets that were sent it (a flush, or the end after one) and have not answered. */
  owedBy: Set<Line>;
  /** The next socket adopted gets its audio and its flush again: none left owes it. */
  replay: boolean;
  /** Its replay is ended at once, with its flush (its socket answered neither the flush nor the end, or every utterance ends its socket). */
  endReplay: boolean;
}

/** One socket to the service, and what the stream knows of it. */
interface Line {
  readonly connection: RealtimeConnection;
  readonly socket: WebSocket;
  readonly finals: SocketFinals;
  /** Live text since its last final (deltas joined as they come). */
  live: string;
  /** It was sent `input_audio.end`: its next final answers what it owes, then it closes. */
  ending: boolean;
  /** It was sent audio: a socket that has heard nothing can carry a replay as it is. */
  heard: boolean;
  /** It carries a replay of a flushed utterance: its live text repeats words already shown. */
  replaying: boolean;
  /** Its set-up carried undocumented settings and went ahead unacknowledged: a late error is their refusal. */
  unconfirmed: boolean;
  closed: boolean;
  /** performance.now() of its adoption and of its last audio. */
  adoptedAt: number;
  audioAt: number;
  /** The unanswered flush's next stage; the idle close. */
  answerTimer: NodeJS.Timeout | null;
  idleTimer: NodeJS.Timeout | null;
}

/**
 * One session's stream, kept across utterances on one socket at a time. The audio of the utterance in
 * progress (and of a flushed one still awaiting its transcript) stays in RAM until its transcript arrives,
 * so a dropped or silent socket is replaced and the audio replayed: the senior never has to repeat
 * themselves. Reopening backs off across dropped sockets and is bounded (`maxReconnects`): a service that
 * accepts and drops every socket costs at most that many replays, then the utterance fails as unavailable.
 */
class MistralTranscriptionStream implements TranscriptionStream {
  /** The socket new audio goes to. */
  private line: Line | undefined;
  private connecting: Promise<Line> | undefined;
  /** Audio appended since the last flush, and sent (or to be sent on the next socket). */
  private current: Int16Array[] = [];
  private currentSamples = 0;
  /** Audio appended and not yet sent: it becomes one chunk of `current` when full or at the flush. */
  private batch = new Int16Array(APPEND_BATCH_SAMPLES);
  private batchLength = 0;
  private pending: Flush | undefined;
  /** The live text last handed to the listeners. */
  private told = '';
  private readonly listeners: Array<(text: string) => void> = [];
  private readonly lifetime = new AbortController();
  /**
   * Sockets lost since the last healthy one (0: the next dial is the stream's first, or follows a healthy
   * socket). It grows with failed connects and with sockets the service or the network took away alike
   * (dropped, cut, errored), so a service that accepts and drops every socket meets the same back-off and
   * bound as one that refuses; a socket the stream itself ended or closed (an unanswered flush, a replay's
   * order, an idle one) is no loss and waits for nothing.
   */
  private losses = 0;
  /** performance.now() by which the pending flush gives up (Infinity when none waits). */
  private flushDeadline = Infinity;
  /** The service lost audio of the utterance in progress while no flush waited: its flush fails with this. */
  private lost: unknown;
  /** `maxReconnects` ran out: the stream opens no socket again, and every flush fails with this. */
  private exhausted: TranscriberUnavailableError | undefined;

  private readonly settings: StreamSettings;
  /** The senior's names, sent only when STT_CONTEXT_BIAS is on. */
  private readonly names: string[];

  constructor(settings: StreamSettings, names: string[]) {
    this.settings = settings;
    this.names = names;
  }

  /** Adopted once no longer connecting: adopting a socket may end it at once (a replay), and open the next. */
  connected(): Promise<Line> {
    this.connecting ??= this.connectWithBackoff().then(
      (line) => {
        this.connecting = undefined;
        this.adopt(line);
        return line;
      },
      (err: unknown) => {
        this.connecting = undefined;
        throw err;
      },
    );
    return this.connecting;
  }

  append(pcm: Int16Array): void {
    if (this.lifetime.signal.aborted || this.exhausted || pcm.length === 0) return;
    // Copied into the batch: the caller may reuse its array.
    for (let at = 0; at < pcm.length; ) {
      const n = Math.min(pcm.length - at, APPEND_BATCH_SAMPLES - this.batchLength);
      this.batch.set(pcm.subarray(at, at + n), this.batchLength);
      this.batchLength += n;
      at += n;
      if (this.batchLength === APPEND_BATCH_SAMPLES) this.sendBatch();
    }
  }

  private sendBatch(): void {
    if (this.batchLength === 0) return;
    const chunk = this.batch.subarray(0, this.batchLength);
    this.batch = new Int16Array(APPEND_BATCH_SAMPLES);
    this.batchLength = 0;
    this.current.push(chunk);
    this.currentSamples += chunk.length;
    // Bounded: past the longest utterance, the oldest audio goes (the listener cuts utterances there anyway).
    while (this.currentSamples > MAX_BUFFERED_SAMPLES) this.currentSamples -= this.current.shift()!.length;
    if (!this.line) return this.reconnect();
    // Held while the socket owes a flush: the audio after it would be in the answer to its end.
    if (!this.owes(this.line)) this.send(this.line, chunk);
  }

  flush(signal: AbortSignal): Promise<string> {
    if (this.lifetime.signal.aborted) return Promise.reject(new TranscriberUnavailableError('transcription stream closed'));
    if (this.pending) return Promise.reject(new Error('a flush is already waiting for its transcript'));
    signal.throwIfAborted();
    this.sendBatch();
    // The utterance cannot be transcribed whole: its audio (or part of it) is gone, and so is the service.
    const failure = this.exhausted ?? this.lost;
    if (failure) {
      this.lost = undefined;
      this.dropAudio();
      return Promise.reject(failure);
    }
    if (this.current.length === 0) return Promise.resolve('');
    const audio = this.current;
    this.current = [];
    this.currentSamples = 0;
    return new Promise<string>((resolve, reject) => {
      const settle = (fn: () => void) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pending = undefined;
        this.flushDeadline = Infinity;
        for (const line of flush.owedBy) clearAnswerTimer(line);
        fn();
      };
      const onAbort = () => flush.reject(signal.reason);
      const timer = setTimeout(() => flush.reject(new TranscriptionTimeoutError(`no transcript within ${this.settings.flushTimeoutMs} ms`)), this.settings.flushTimeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.flushDeadline = performance.now() + this.settings.flushTimeoutMs;
      const flush: Flush = {
        audio,
        owedBy: new Set(),
        replay: !this.line,
        endReplay: this.settings.flushes.mode === 'end',
        resolve: (text) => settle(() => resolve(text)),
        reject: (err) => {
          const owing = [...flush.owedBy];
          settle(() => reject(err));
          // A transcript arriving late would be taken for the next utterance's: the sockets that owe it are done.
          for (const line of owing) this.drop(line, 'close');
        },
      };
      this.pending = flush;
      if (!this.line) return this.reconnect();
      this.sendFlush(this.line, flush);
      if (this.settings.flushes.mode === 'end') this.end(this.line);
    });
  }

  onDelta(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    if (this.lifetime.signal.aborted) return;
    this.lifetime.abort();
    this.pending?.reject(new TranscriberUnavailableError('transcription stream closed'));
    this.dropAudio();
    if (this.line) this.drop(this.line, 'close');
  }

  private dropAudio(): void {
    this.current = [];
    this.currentSamples = 0;
    this.batchLength = 0;
  }

  // --- a flush and its answer ---

  private sendFlush(line: Line, flush: Flush): void {
    flush.owedBy.add(line);
    void line.connection.flushAudio().catch(ignore);
    this.awaitAnswer(line, flush);
  }

  /** The flush's next stage if `line` has not answered within STT_FLUSH_ANSWER_MS. */
  private awaitAnswer(line: Line, flush: Flush): void {
    clearAnswerTimer(line);
    line.answerTimer = setTimeout(() => {
      line.answerTimer = null;
      if (this.pending === flush && flush.owedBy.has(line) && !line.closed) this.unanswered(line, flush);
    }, this.settings.flushAnswerMs);
  }

  /**
   * A flush left unanswered (reported: pipecat#4487). First its socket is ended — `input_audio.end` is
   * answered with the final text of its pending audio, as the service's clients relied on before flush
   * existed — and new audio goes to a fresh socket. Unanswered still, the utterance goes on a fresh socket
   * of its own: its audio replayed, flushed and ended at once (so that its answer comes as soon as the
   * service answers anything), the audio spoken since held until it has answered.
   */
  private unanswered(line: Line, flush: Flush): void {
    if (!line.ending) {
      this.settings.onServiceEvent('flush_unanswered');
      this.settings.logger?.debug('voice transcription flush unanswered: ending its socket');
      this.endEveryUtterance();
      this.end(line);
      return this.awaitAnswer(line, flush);
    }
    this.settings.onServiceEvent('flush_replayed');
    this.settings.logger?.debug('voice transcription flush unanswered after its end: replaying it on a fresh socket');
    flush.endReplay = true;
    this.replay(flush);
  }

  /**
   * A service seen leaving a flush unanswered is not trusted with one again: from now on every utterance
   * of the transcriber's streams ends its socket, whose answer costs one round trip rather than
   * STT_FLUSH_ANSWER_MS and then one (the next socket is opened as the utterance ends, ready for the next).
   */
  private endEveryUtterance(): void {
    if (this.settings.flushes.mode === 'end') return;
    this.settings.flushes.mode = 'end';
    this.settings.logger?.warn('the transcription service left a flush unanswered: every utterance now ends its socket (STT_FLUSH_MODE=end)');
  }

  /** `line` owes the flush's answer: it is ended (its answer is the final text), and a fresh socket opened for the speech to come. */
  private end(line: Line): void {
    line.ending = true;
    if (this.line === line) this.detach(line);
    void line.connection.endAudio().catch(ignore);
    this.reconnect();
  }

  /**
   * The flushed audio goes again, first, on a socket that has heard nothing else: the current one if it has
   * heard nothing yet (opened as the last utterance ended), else a fresh one (the one carrying later audio is replaced).
   */
  private replay(flush: Flush): void {
    flush.replay = true;
    const spare = this.line;
    if (spare && !spare.heard) return this.carryReplay(spare, flush);
    if (spare) this.drop(spare, 'close');
    else this.reconnect();
  }

  /** A final text: the pending flush's if this socket owes it; any other (a flush given up, a replay answered elsewhere) is not taken. */
  private answered(line: Line, final: string): void {
    const flush = this.pending;
    const { text, repeated } = line.finals.take(final, line.live);
    this.resetLive(line);
    if (repeated > 0) this.settings.onServiceEvent('cumulative_final');
    if (!flush?.owedBy.has(line)) return;
    // A transcript: the socket is healthy, the next drop reconnects without waiting.
    this.losses = 0;
    const others = [...flush.owedBy].filter((l) => l !== line);
    line.replaying = false;
    flush.resolve(text);
    // Another socket owing the same text would answer it as the next utterance's: replaced.
    for (const other of others) this.drop(other, 'close');
    if (line.ending || line.finals.words > MAX_SOCKET_WORDS) this.drop(line, 'close');
    // The audio held while it owed the flush.
    else if (line === this.line) this.sendCurrent(line);
  }

  // --- live text ---

  private delta(line: Line, text: string): void {
    // Once a piece is seen continuing a word, every stream of the process reads live text up to its last whole word.
    if (continuesWord(line.live, text)) this.settings.live.fragments = true;
    line.live += text;
    if (line !== this.line || line.replaying) return;
    this.tell(readableLive(line.live, this.settings.live.fragments));
  }

  private resetLive(line: Line): void {
    line.live = '';
    if (line === this.line) this.told = '';
  }

  /** Cumulative: listeners get the whole live text of the utterance (backchannel checks need it). */
  private tell(text: string): void {
    if (text === this.told) return;
    this.told = text;
    for (const listener of this.listeners) listener(text);
  }

  // --- sockets ---

  /** Opens a socket when there is something to send and none is open or opening (never once the reconnects ran out). */
  private reconnect(): void {
    if (this.line || this.connecting || this.lifetime.signal.aborted || this.exhausted) return;
    this.connected().catch((err: unknown) => {
      if (this.lifetime.signal.aborted) return;
      this.settings.logger?.warn({ err: { name: (err as Error).name, message: (err as Error).message } }, 'voice transcription unavailable');
      // The utterance's flush fails now if it waits, or when it comes: never an empty transcript for lost speech.
      if (this.pending) this.pending.reject(err);
      else this.lost = err;
      // Audio nobody can transcribe is not kept.
      this.dropAudio();
    });
  }

  /**
   * Dials until a socket is set up. After a loss, the back-off of `losses` (see
   * MistralTranscriberOptions.backoffMs) — or the `Retry-After` of a 429; `connectAttempts` failed
   * connects in a row end this call, more than `maxReconnects` losses without a healthy socket end the stream.
   */
  private async connectWithBackoff(): Promise<Line> {
    let lastError: unknown;
    let retryAfterMs: number | undefined;
    for (let failed = 0; ; ) {
      if (this.losses > this.settings.maxReconnects) {
        this.exhausted = new TranscriberUnavailableError(`transcription socket reopened ${this.settings.maxReconnects} times without a transcript: giving up on this stream`, {
          cause: lastError,
        });
        throw this.exhausted;
      }
      if (this.losses > 0) {
        const delay = retryAfterMs ?? this.backoff(this.losses);
        // A flush that would time out before the next socket is even dialled fails now, as the
        // service's failure it is (the kiosk is told), not later as a late transcript.
        if (this.pending && performance.now() + delay >= this.flushDeadline) {
          throw new TranscriberUnavailableError('transcription socket lost: no new socket within the flush bound', { cause: lastError });
        }
        await sleep(delay, this.lifetime.signal);
      }
      this.lifetime.signal.throwIfAborted();
      retryAfterMs = undefined;
      try {
        const line = await this.connectOnce();
        if (this.lifetime.signal.aborted) {
          void line.connection.close();
          throw new TranscriberUnavailableError('transcription stream closed');
        }
        return line;
      } catch (err) {
        if (this.lifetime.signal.aborted) throw err;
        lastError = err;
        this.losses += 1;
        if (err instanceof UpgradeRefusedError && err.throttleMs !== null) {
          this.settings.onServiceEvent('rate_limited');
          // The wait the service asked for (a 429's, or a 503 naming one), within the flush's own bound.
          retryAfterMs = Math.min(err.throttleMs, this.settings.flushTimeoutMs);
        }
        this.settings.logger?.debug({ losses: this.losses, err: { name: (err as Error).name, message: (err as Error).message } }, 'voice transcription connect failed');
        if (++failed >= this.settings.connectAttempts) {
          throw new TranscriberUnavailableError(`transcription service unreachable after ${failed} attempts`, { cause: lastError });
        }
      }
    }
  }

  /** Equal jitter: half the exponential delay for sure, the other half at random, so the session's kiosks do not reconnect in step. */
  private backoff(losses: number): number {
    const { backoffMs, maxBackoffMs } = this.settings;
    const delay = Math.min(maxBackoffMs, backoffMs * 2 ** (losses - 1));
    return delay / 2 + (Math.random() * delay) / 2;
  }

  /**
   * A socket, `session.created`, then one `session.update`: all within `connectTimeoutMs`. Refused while it
   * carried undocumented settings, the set-up is made again without them on a new socket (and so is every
   * later one: SessionFields).
   */
  private async connectOnce(): Promise<Line> {
    for (;;) {
      const deadline = Date.now() + this.settings.connectTimeoutMs;
      const undocumented = this.settings.fields.undocumented(this.names);
      const dialled = await dialRealtime({ serverUrl: this.settings.serverUrl, apiKey: this.settings.apiKey, model: this.settings.model, timeoutMs: deadline - Date.now(), signal: this.lifetime.signal });
      countSocket(dialled.socket, this.settings.sockets);
      try {
        const { line, first } = await this.setUp(dialled, undocumented, deadline);
        void this.pump(line, dialled.events, first);
        return line;
      } catch (err) {
        void dialled.events.return?.(undefined);
        void dialled.connection.close();
        if (!(err instanceof SetUpRefusedError) || Object.keys(undocumented).length === 0) throw err;
        this.settings.fields.refuse(err.message);
      }
    }
  }

  /**
   * Sends `session.update` and waits for `session.updated` — or, as some versions never send it, for
   * SETUP_GRACE_MS without an error. Returns the event read last if it is not the set-up's (the pump's first).
   */
  private async setUp(dialled: RealtimeSocket, undocumented: Record<string, unknown>, deadline: number): Promise<{ line: Line; first: Promise<IteratorResult<RealtimeEvent>> | null }> {
    const audioFormat = { encoding: AudioEncoding.PcmS16le, sampleRate: INPUT_SAMPLE_RATE };
    const delay = this.settings.streamingDelayMs;
    dialled.socket.send(sessionUpdateMessage({ audioFormat, ...(delay !== undefined ? { targetStreamingDelayMs: delay } : {}) }, undocumented));
    const graceEnds = Math.min(deadline, Date.now() + SETUP_GRACE_MS);
    const line = newLine(dialled);
    for (;;) {
      const next = dialled.events.next();
      const outcome = await withTimeout(next, graceEnds - Date.now());
      if (outcome === 'timeout') {
        if (Date.now() >= deadline) throw new TranscriberUnavailableError('transcription set-up timed out');
        this.settings.onServiceEvent('no_session_updated');
        line.unconfirmed = Object.keys(undocumented).length > 0;
        return { line, first: next };
      }
      if (outcome.done) throw new TranscriberUnavailableError('transcription socket closed during set-up');
      const event = outcome.value;
      if (event.type === 'session.updated') return { line, first: null };
      if (event.type === 'error') throw new SetUpRefusedError(`transcription set-up refused: ${describeServiceError(event)}`);
    }
  }

  /** Makes the new socket current and sends it what it has not heard: a flushed utterance none owes any more, its flush, then the current one. */
  private adopt(line: Line): void {
    this.line = line;
    this.told = '';
    this.keepAlive(line);
    const flush = this.pending;
    if (flush?.replay) this.carryReplay(line, flush);
    else this.sendCurrent(line);
    this.armIdleClose(line);
  }

  /** `line`, which has heard nothing, gets the flushed utterance's audio and its flush (and its end, when the replay is ended at once). */
  private carryReplay(line: Line, flush: Flush): void {
    flush.replay = false;
    line.replaying = true;
    for (const pcm of flush.audio) this.send(line, pcm);
    this.sendFlush(line, flush);
    if (flush.endReplay) this.end(line);
  }

  /** Pings `line` while it is current; no pong by the next ping and it is replaced. */
  private keepAlive(line: Line): void {
    let answered = true;
    const onPong = () => (answered = true);
    const stop = () => {
      clearInterval(timer);
      line.socket.off('pong', onPong);
    };
    line.socket.on('pong', onPong);
    const timer = setInterval(() => {
      if (this.line !== line) return stop();
      if (!answered) {
        stop();
        this.settings.logger?.warn('voice transcription socket stopped answering: reopening it');
        return this.drop(line, 'terminate', 'always');
      }
      answered = false;
      try {
        line.socket.ping();
      } catch {
        // Not open any more: its close is already on the way to pump().
      }
    }, this.settings.keepAliveMs);
    timer.unref();
  }

  /** A socket that carried no audio for `idleCloseMs` and owes nothing is closed before the service ends it; the next speech opens another. */
  private armIdleClose(line: Line): void {
    const check = () => {
      line.idleTimer = null;
      if (line.closed || this.line !== line) return;
      const idleMs = performance.now() - line.audioAt;
      if (idleMs < this.settings.idleCloseMs || this.owes(line)) {
        line.idleTimer = setTimeout(check, Math.max(1, this.settings.idleCloseMs - idleMs));
        line.idleTimer.unref();
        return;
      }
      this.settings.logger?.debug('voice transcription socket idle: closing it');
      this.drop(line, 'close', 'never');
    };
    line.idleTimer = setTimeout(check, this.settings.idleCloseMs);
    line.idleTimer.unref();
  }

  private owes(line: Line): boolean {
    return this.pending?.owedBy.has(line) === true;
  }

  private async pump(line: Line, events: AsyncIterator<RealtimeEvent>, first: Promise<IteratorResult<RealtimeEvent>> | null): Promise<void> {
    for (let next = first ?? events.next(); ; next = events.next()) {
      const { done, value } = await next;
      if (done) break;
      if (line.closed) continue;
      const event = value as { type: string; text?: unknown };
      if (event.type === 'transcription.text.delta' && typeof event.text === 'string') this.delta(line, event.text);
      else if (event.type === 'transcription.done' && typeof event.text === 'string') this.answered(line, event.text);
      else if (event.type === 'session.updated') line.unconfirmed = false;
      else if (event.type === 'error') this.serviceError(line, event);
    }
    this.drop(line, 'gone');
  }

  /**
   * An error event. After a set-up that went ahead unacknowledged, with undocumented settings: their
   * refusal (the socket is replaced without them). On a socket owing the flush: the flush fails. On one
   * owing nothing (the service ending an idle session): it is closed, and costs nothing.
   */
  private serviceError(line: Line, event: unknown): void {
    const reason = describeServiceError(event);
    this.lose(line);
    if (line.unconfirmed) {
      this.settings.fields.refuse(reason);
      return this.drop(line, 'close');
    }
    // The flush fails, and every socket that owed it is closed.
    if (this.owes(line)) return this.pending!.reject(new TranscriberUnavailableError(`transcription failed: ${reason}`));
    this.settings.onServiceEvent('service_closed');
    this.settings.logger?.debug({ reason }, 'voice transcription socket ended by the service');
    this.drop(line, 'close');
  }

  /** `line` stops taking new audio (what it was sent is still in `current`, for the next socket). */
  private detach(line: Line): void {
    this.socketGone(line);
    this.line = undefined;
    this.told = '';
  }

  /**
   * The socket goes (closed by us, or gone): if it owed the flush and none else does, the flush is
   * replayed on the next socket, which opens when there is something to carry (`reopen: 'needed'`), at
   * once (`'always'`: a dead socket is replaced before the next sentence), or not now (`'never'`).
   */
  private drop(line: Line, how: 'close' | 'terminate' | 'gone', reopen: 'needed' | 'always' | 'never' = 'needed'): void {
    if (line.closed) return;
    line.closed = true;
    // Closed by the service or the network, not by the stream: a loss.
    if (how !== 'close') this.lose(line);
    clearAnswerTimer(line);
    if (line.idleTimer) clearTimeout(line.idleTimer);
    if (this.line === line) this.detach(line);
    const flush = this.pending;
    if (flush?.owedBy.delete(line) && flush.owedBy.size === 0 && !this.lifetime.signal.aborted) flush.replay = true;
    if (how === 'terminate') line.socket.terminate();
    else if (how === 'close') void line.connection.close();
    if (reopen === 'never' || this.lifetime.signal.aborted) return;
    // The replay must come before the audio sent since: a socket carrying that audio is replaced.
    if (flush?.replay) return this.replay(flush);
    if (reopen === 'always' || this.current.length > 0) this.reconnect();
  }

  /** The current socket goes: one open `healthyAfterMs` was healthy, and the back-off starts over. */
  private socketGone(line: Line): void {
    if (performance.now() - line.adoptedAt >= this.settings.healthyAfterMs) this.losses = 0;
  }

  /** A socket the service or the network took away: one loss more, unless it had been healthy. */
  private lose(line: Line): void {
    this.losses = performance.now() - line.adoptedAt >= this.settings.healthyAfterMs ? 0 : this.losses + 1;
  }

  /** The audio since the last flush, to a socket that has heard none of it. */
  private sendCurrent(line: Line): void {
    for (const pcm of this.current) this.send(line, pcm);
  }

  private send(line: Line, pcm: Int16Array): void {
    line.heard = true;
    line.audioAt = performance.now();
    for (let at = 0; at < pcm.length; at += MAX_APPEND_SAMPLES) {
      const part = pcm.subarray(at, at + MAX_APPEND_SAMPLES);
      // s16le on the wire; Node's typed arrays are little-endian on every platform it ships for.
      void line.connection.sendAudio(new Uint8Array(part.buffer, part.byteOffset, part.byteLength)).catch(ignore);
    }
  }
}

/** The service answered the set-up with an error. */
class SetUpRefusedError extends TranscriberUnavailableError {}

function newLine(dialled: RealtimeSocket): Line {
  const now = performance.now();
  return {
    connection: dialled.connection,
    socket: dialled.socket,
    finals: new SocketFinals(),
    live: '',
    ending: false,
    heard: false,
    replaying: false,
    unconfirmed: false,
    closed: false,
    adoptedAt: now,
    audioAt: now,
    answerTimer: null,
    idleTimer: null,
  };
}

function clearAnswerTimer(line: Line): void {
  if (line.answerTimer) clearTimeout(line.answerTimer);
  line.answerTimer = null;
}

/** `ws`'s readyState once the socket has closed. */
const WS_CLOSED = 3;

/**
 * Counts the socket until it closes. Counted from the dial (the socket is open), whatever happens next: a
 * set-up that fails closes it, and `ws` emits `close` after a handshake, its timeout, or a terminate alike.
 */
function countSocket(socket: WebSocket, sockets: SocketCounter | undefined): void {
  if (!sockets || socket.readyState === WS_CLOSED) return;
  sockets.opened();
  socket.once('close', () => sockets.closed());
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return new Promise<T | 'timeout'>((resolve, reject) => {
    const timer = setTimeout(() => resolve('timeout'), Math.max(0, ms));
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
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

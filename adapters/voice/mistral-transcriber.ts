import { AudioEncoding, RealtimeTranscription, type RealtimeConnection, type RealtimeEvent } from '@mistralai/mistralai/extra/realtime';
import type { Logger } from 'pino';
import { mistralSdkServerUrl, type KohamiEnv } from '../mistral/base-url.ts';
import { INPUT_SAMPLE_RATE, TranscriptionTimeoutError, type TranscriberPort, type TranscriptionStream } from '../../machines/voice/voice.port.ts';

export const MISTRAL_STT_MODEL = 'voxtral-mini-transcribe-realtime-2602';

/** The service is out of reach (connection refused, handshake failed, reconnects exhausted) or answered an error. */
export class TranscriberUnavailableError extends Error {
  override name = 'TranscriberUnavailableError';
}

export interface MistralTranscriberOptions {
  apiKey: string;
  /** MISTRAL_BASE_URL, checked against INV-T02 here, at construction. */
  baseUrl: string;
  env: KohamiEnv;
  /** MISTRAL_STT_MODEL. */
  model?: string;
  /** Seniors speak French: fixing it spares the recognizer a language guess on short turns. */
  language?: string;
  /** Bound on one connection attempt (socket, `session.created`, `session.updated`). Default 2,000 ms. */
  connectTimeoutMs?: number;
  /** `target_streaming_delay_ms`: how far behind the audio interim words come (80–1200); the service's own (VOXTRAL_STREAMING_DELAY_MS) when unset. */
  streamingDelayMs?: number;
  /** Bound on a flush, whatever the caller's signal. Default 5,000 ms; the runtime passes STT_BUDGET_MS, its one bound. */
  flushTimeoutMs?: number;
  /**
   * An open socket is pinged this often; one whose pong has not come back by the next ping is dead
   * (a network cut leaves no close behind) and is replaced at once, so the senior's next sentence
   * does not go into it. Default 10,000 ms: a dead socket is found within 20 s of dying.
   */
  keepAliveMs?: number;
  /** Failed connection attempts in a row before a (re)connection gives up. Default 3. */
  connectAttempts?: number;
  /**
   * Reconnect back-off: before the k-th socket since the last healthy one, a wait of
   * `backoffMs × 2^(k−1)` (at most `maxBackoffMs`), jittered down to half of it. The count carries
   * across sockets the service accepted and then dropped, and across failed connects alike: it
   * resets only once a socket has been healthy (it delivered a transcript, or stayed open
   * `healthyAfterMs`). Defaults 100 ms, 2,000 ms, 10,000 ms.
   */
  backoffMs?: number;
  maxBackoffMs?: number;
  healthyAfterMs?: number;
  /**
   * Sockets opened after the first without a healthy one in between, before the stream gives up:
   * the utterance's flush (pending or next) fails with TranscriberUnavailableError and the stream
   * opens no socket again. Default 5: at most 6 sockets per stream and utterance, whatever the service does.
   */
  maxReconnects?: number;
  logger?: Logger;
  /** Told of every socket to the service as it opens and as it closes (the runtime's open-sockets gauge). */
  sockets?: SocketCounter;
}

/** Each `opened()` is followed, once the socket has closed (by either side, or cut), by exactly one `closed()`. */
export interface SocketCounter {
  opened(): void;
  closed(): void;
}

/** The reconnect policy's defaults (MistralTranscriberOptions says what each bounds). */
export const TRANSCRIBER_RECONNECT = { connectAttempts: 3, backoffMs: 100, maxBackoffMs: 2_000, healthyAfterMs: 10_000, maxReconnects: 5 } as const;

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

/** TranscriberPort over Voxtral realtime (`@mistralai/mistralai/extra/realtime`), one socket per session. */
/** Voxtral realtime's own `target_streaming_delay_ms` when a session does not set one (where it matches offline Whisper). */
export const VOXTRAL_STREAMING_DELAY_MS = 480;

export class MistralTranscriber implements TranscriberPort {
  private readonly client: RealtimeTranscription;
  private readonly settings: StreamSettings;

  constructor(options: MistralTranscriberOptions) {
    const serverUrl = mistralSdkServerUrl(options.baseUrl, options.env);
    this.client = new RealtimeTranscription({ apiKey: options.apiKey, serverURL: serverUrl });
    this.settings = {
      serverUrl,
      model: options.model ?? MISTRAL_STT_MODEL,
      language: options.language ?? 'fr',
      ...(options.streamingDelayMs !== undefined ? { streamingDelayMs: options.streamingDelayMs } : {}),
      connectTimeoutMs: options.connectTimeoutMs ?? 2_000,
      flushTimeoutMs: options.flushTimeoutMs ?? 5_000,
      keepAliveMs: options.keepAliveMs ?? 10_000,
      connectAttempts: options.connectAttempts ?? TRANSCRIBER_RECONNECT.connectAttempts,
      backoffMs: options.backoffMs ?? TRANSCRIBER_RECONNECT.backoffMs,
      maxBackoffMs: options.maxBackoffMs ?? TRANSCRIBER_RECONNECT.maxBackoffMs,
      healthyAfterMs: options.healthyAfterMs ?? TRANSCRIBER_RECONNECT.healthyAfterMs,
      maxReconnects: options.maxReconnects ?? TRANSCRIBER_RECONNECT.maxReconnects,
      logger: options.logger,
      sockets: options.sockets,
    };
  }

  /** Resolves once the socket is open and configured; rejects (TranscriberUnavailableError) when it cannot be, or at once on `signal`. */
  async open(options: { contextBias: string[]; signal: AbortSignal }): Promise<TranscriptionStream> {
    const { signal } = options;
    signal.throwIfAborted();
    const stream = new MistralTranscriptionStream(this.client, this.settings, normalizeContextBias(options.contextBias));
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

interface StreamSettings {
  serverUrl: string;
  model: string;
  language: string;
  streamingDelayMs?: number;
  connectTimeoutMs: number;
  flushTimeoutMs: number;
  keepAliveMs: number;
  connectAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  healthyAfterMs: number;
  maxReconnects: number;
  logger: Logger | undefined;
  sockets: SocketCounter | undefined;
}

interface PendingFlush {
  resolve(text: string): void;
  reject(err: unknown): void;
}

/**
 * One session's socket, kept across utterances. The audio of the utterance in progress (and of a
 * flushed one still awaiting its transcript) stays in RAM until its transcript arrives, so a
 * dropped socket is reopened and the audio replayed: the senior never has to repeat themselves.
 * Reopening backs off across dropped sockets and is bounded (`maxReconnects`): a service that
 * accepts and drops every socket costs at most that many replays, then the utterance fails as unavailable.
 */
class MistralTranscriptionStream implements TranscriptionStream {
  private connection: RealtimeConnection | undefined;
  private connecting: Promise<RealtimeConnection> | undefined;
  /** Audio flushed and awaiting `transcription.done`. */
  private flushed: Int16Array[] = [];
  /** Audio appended since the last flush, and sent (or to be sent on the next socket). */
  private current: Int16Array[] = [];
  private currentSamples = 0;
  /** Audio appended and not yet sent: it becomes one chunk of `current` when full or at the flush. */
  private batch = new Int16Array(APPEND_BATCH_SAMPLES);
  private batchLength = 0;
  private pending: PendingFlush | undefined;
  private interim = '';
  private readonly listeners: Array<(text: string) => void> = [];
  private readonly lifetime = new AbortController();
  /**
   * Sockets dialled since the last healthy one (0: the next dial is the stream's first, or follows a
   * healthy socket). It grows with failed connects and with sockets accepted then dropped alike, so
   * a service that accepts and drops every socket meets the same back-off and bound as one that refuses.
   */
  private dials = 0;
  /** performance.now() when the current socket was adopted. */
  private adoptedAt = 0;
  /** performance.now() by which the pending flush gives up (Infinity when none waits). */
  private flushDeadline = Infinity;
  /** The service lost audio of the utterance in progress while no flush waited: its flush fails with this. */
  private lost: unknown;
  /** `maxReconnects` ran out: the stream opens no socket again, and every flush fails with this. */
  private exhausted: TranscriberUnavailableError | undefined;

  constructor(
    private readonly client: RealtimeTranscription,
    private readonly settings: StreamSettings,
    private readonly contextBias: string[],
  ) {}

  connected(): Promise<RealtimeConnection> {
    this.connecting ??= this.connectWithBackoff().finally(() => (this.connecting = undefined));
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
    if (this.connection) this.send(this.connection, chunk);
    else this.reconnect();
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
    this.flushed = this.current;
    this.current = [];
    this.currentSamples = 0;
    return new Promise<string>((resolve, reject) => {
      const settle = (fn: () => void) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pending = undefined;
        this.flushDeadline = Infinity;
        this.flushed = [];
        this.interim = '';
        fn();
      };
      const giveUp = (err: unknown) => {
        settle(() => reject(err));
        // A transcript arriving late would be taken for the next utterance's: this socket is done.
        this.retire();
      };
      const onAbort = () => giveUp(signal.reason);
      const timer = setTimeout(() => giveUp(new TranscriptionTimeoutError(`no transcript within ${this.settings.flushTimeoutMs} ms`)), this.settings.flushTimeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.flushDeadline = performance.now() + this.settings.flushTimeoutMs;
      this.pending = { resolve: (text) => settle(() => resolve(text)), reject: (err) => settle(() => reject(err)) };
      if (this.connection) void this.connection.flushAudio().catch(ignore);
      else this.reconnect();
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
    this.retire();
  }

  private dropAudio(): void {
    this.current = [];
    this.currentSamples = 0;
    this.batchLength = 0;
  }

  /** Opens a socket when there is something to send and none is open or opening (never once the reconnects ran out). */
  private reconnect(): void {
    if (this.connection || this.connecting || this.lifetime.signal.aborted || this.exhausted) return;
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
   * Dials until a socket is adopted. Before every dial but a healthy stream's first, the back-off of
   * `dials` (see MistralTranscriberOptions.backoffMs); `connectAttempts` failed connects in a row
   * end this call, `maxReconnects` dials without a healthy socket end the stream.
   */
  private async connectWithBackoff(): Promise<RealtimeConnection> {
    let lastError: unknown;
    for (let failed = 0; ; ) {
      if (this.dials > this.settings.maxReconnects) {
        this.exhausted = new TranscriberUnavailableError(`transcription socket reopened ${this.settings.maxReconnects} times without a transcript: giving up on this stream`, {
          cause: lastError,
        });
        throw this.exhausted;
      }
      if (this.dials > 0) {
        const delay = this.backoff(this.dials);
        // A flush that would time out before the next socket is even dialled fails now, as the
        // service's failure it is (the kiosk is told), not later as a late transcript.
        if (this.pending && performance.now() + delay >= this.flushDeadline) {
          throw new TranscriberUnavailableError('transcription socket lost: no new socket within the flush bound', { cause: lastError });
        }
        await sleep(delay, this.lifetime.signal);
      }
      this.lifetime.signal.throwIfAborted();
      this.dials += 1;
      try {
        const connection = await this.connectOnce();
        if (this.lifetime.signal.aborted) {
          void connection.close();
          throw new TranscriberUnavailableError('transcription stream closed');
        }
        this.adopt(connection);
        return connection;
      } catch (err) {
        if (this.lifetime.signal.aborted) throw err;
        lastError = err;
        this.settings.logger?.debug({ dials: this.dials }, 'voice transcription connect failed');
        if (++failed >= this.settings.connectAttempts) {
          throw new TranscriberUnavailableError(`transcription service unreachable after ${failed} attempts`, { cause: lastError });
        }
      }
    }
  }

  /** Equal jitter: half the exponential delay for sure, the other half at random, so the session's kiosks do not reconnect in step. */
  private backoff(dials: number): number {
    const { backoffMs, maxBackoffMs } = this.settings;
    const delay = Math.min(maxBackoffMs, backoffMs * 2 ** (dials - 1));
    return delay / 2 + (Math.random() * delay) / 2;
  }

  /** The current socket goes (closed, dead or retired): one open `healthyAfterMs` was healthy, and the back-off starts over. */
  private socketGone(): void {
    if (performance.now() - this.adoptedAt >= this.settings.healthyAfterMs) this.dials = 0;
  }

  /** Socket, `session.created`, then one `session.update` answered by `session.updated`: all within `connectTimeoutMs`. */
  private async connectOnce(): Promise<RealtimeConnection> {
    const deadline = Date.now() + this.settings.connectTimeoutMs;
    const connection = await this.client.connect(this.settings.model, { serverUrl: this.settings.serverUrl, timeoutMs: this.settings.connectTimeoutMs });
    countSocket(connection, this.settings.sockets);
    const events = connection[Symbol.asyncIterator]();
    try {
      sendSessionUpdate(connection, {
        audio_format: { encoding: AudioEncoding.PcmS16le, sample_rate: INPUT_SAMPLE_RATE },
        language: this.settings.language,
        ...(this.settings.streamingDelayMs !== undefined ? { target_streaming_delay_ms: this.settings.streamingDelayMs } : {}),
        ...(this.contextBias.length > 0 ? { context_bias: this.contextBias } : {}),
      });
      for (;;) {
        const next = await withTimeout(events.next(), deadline - Date.now());
        if (next.done) throw new TranscriberUnavailableError('transcription socket closed during set-up');
        const event = next.value;
        if (event.type === 'session.updated') break;
        if (event.type === 'error') throw new TranscriberUnavailableError(`transcription set-up refused: ${describeError(event)}`);
      }
      void this.pump(connection, events);
      return connection;
    } catch (err) {
      void events.return?.(undefined);
      void connection.close();
      throw err;
    }
  }

  /** Makes the new socket current and replays what it has not heard: the flushed utterance, its flush, then the current one. */
  private adopt(connection: RealtimeConnection): void {
    this.connection = connection;
    this.adoptedAt = performance.now();
    this.keepAlive(connection);
    this.interim = '';
    for (const pcm of this.flushed) this.send(connection, pcm);
    if (this.pending) void connection.flushAudio().catch(ignore);
    for (const pcm of this.current) this.send(connection, pcm);
  }

  /** Pings `connection` while it is current (stops by itself after a close or a replacement); no pong by the next ping and it is replaced. */
  private keepAlive(connection: RealtimeConnection): void {
    const socket = rawSocket(connection);
    let answered = true;
    const onPong = () => (answered = true);
    const stop = () => {
      clearInterval(timer);
      socket.off?.('pong', onPong);
    };
    socket.on?.('pong', onPong);
    const timer = setInterval(() => {
      if (this.connection !== connection) return stop();
      if (!answered) {
        stop();
        return this.replaceDead(connection, socket);
      }
      answered = false;
      try {
        socket.ping?.();
      } catch {
        // Not open any more: its close is already on the way to pump().
      }
    }, this.settings.keepAliveMs);
    timer.unref();
  }

  /** A socket that stopped answering is cut (no close handshake can complete) and a new one opened with the usual backoff. */
  private replaceDead(connection: RealtimeConnection, socket: RawSocket): void {
    this.settings.logger?.warn('voice transcription socket stopped answering: reopening it');
    this.socketGone();
    this.connection = undefined;
    this.interim = '';
    if (typeof socket.terminate === 'function') socket.terminate();
    else void connection.close();
    this.reconnect();
  }

  private async pump(connection: RealtimeConnection, events: AsyncIterator<RealtimeEvent>): Promise<void> {
    for (;;) {
      const next = await events.next();
      if (next.done) break;
      const event = next.value as { type: string; text?: unknown };
      if (this.connection !== connection) continue;
      // Cumulative: listeners get the whole interim text of the utterance (backchannel checks need it).
      if (event.type === 'transcription.text.delta' && typeof event.text === 'string') {
        this.interim += event.text;
        for (const listener of this.listeners) listener(this.interim);
      } else if (event.type === 'transcription.done' && typeof event.text === 'string') {
        // A transcript: the socket is healthy, the next drop reconnects without waiting.
        this.dials = 0;
        this.pending?.resolve(event.text.trim());
      } else if (event.type === 'error') {
        this.pending?.reject(new TranscriberUnavailableError(`transcription failed: ${describeError(event)}`));
        this.retire();
      }
    }
    // The socket closed: if it was the current one, the next sound (or the pending flush) reopens it.
    if (this.connection !== connection) return;
    this.socketGone();
    this.connection = undefined;
    this.interim = '';
    if (this.pending || this.current.length > 0) this.reconnect();
  }

  /** Closes the current socket; a new one opens when there is audio or a flush to carry. */
  private retire(): void {
    const connection = this.connection;
    if (connection) this.socketGone();
    this.connection = undefined;
    this.interim = '';
    if (connection) void connection.close();
    if (!this.lifetime.signal.aborted && (this.pending || this.current.length > 0)) this.reconnect();
  }

  private send(connection: RealtimeConnection, pcm: Int16Array): void {
    for (let at = 0; at < pcm.length; at += MAX_APPEND_SAMPLES) {
      const part = pcm.subarray(at, at + MAX_APPEND_SAMPLES);
      // s16le on the wire; Node's typed arrays are little-endian on every platform it ships for.
      void connection.sendAudio(new Uint8Array(part.buffer, part.byteOffset, part.byteLength)).catch(ignore);
    }
  }
}

/**
 * The SDK 2.7's `updateSession` sends `audio_format` only, but Mistral's realtime session also takes
 * `language` and `context_bias` (set before the first audio). Until the SDK types them, this one
 * message goes out on the connection's own socket. The SDK version is pinned, and the integration
 * test asserting `context_bias` reaches the server fails if an upgrade moves that socket.
 */
function sendSessionUpdate(connection: RealtimeConnection, session: Record<string, unknown>): void {
  const socket = rawSocket(connection);
  if (typeof socket.send !== 'function') throw new TranscriberUnavailableError('this @mistralai/mistralai version hides its realtime socket');
  socket.send(JSON.stringify({ type: 'session.update', session }));
}

/** What this adapter uses of the `ws` socket under the SDK's connection (see sendSessionUpdate). */
interface RawSocket {
  send?: (data: string) => void;
  ping?: () => void;
  terminate?: () => void;
  on?: (event: 'pong', listener: () => void) => void;
  off?: (event: 'pong', listener: () => void) => void;
  once?: (event: 'close', listener: () => void) => void;
  readyState?: number;
}

/** `ws`'s readyState once the socket has closed. */
const WS_CLOSED = 3;

function rawSocket(connection: RealtimeConnection): RawSocket {
  return (Reflect.get(connection, 'websocket') as RawSocket | undefined) ?? {};
}

/**
 * Counts `connection`'s socket until it closes. Counted from the SDK's connect (the socket is open),
 * whatever happens next: a set-up that fails closes it, and `ws` emits `close` after a handshake,
 * its timeout, or a terminate alike.
 */
function countSocket(connection: RealtimeConnection, sockets: SocketCounter | undefined): void {
  const socket = rawSocket(connection);
  if (!sockets || typeof socket.once !== 'function' || socket.readyState === WS_CLOSED) return;
  sockets.opened();
  socket.once('close', () => sockets.closed());
}

function describeError(event: unknown): string {
  const error = (event as { error?: { message?: unknown; code?: unknown } }).error;
  const message = typeof error?.message === 'string' ? error.message : 'unknown error';
  return error?.code === undefined ? message : `${message} (code ${String(error.code)})`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TranscriberUnavailableError('transcription set-up timed out')), Math.max(0, ms));
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

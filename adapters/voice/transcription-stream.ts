import type { RealtimeEvent } from '@mistralai/mistralai/extra/realtime';
import { TranscriptionTimeoutError, type TranscriptionStream } from '../../machines/voice/voice.port.ts';
import { describeServiceError, UpgradeRefusedError } from './realtime-socket.ts';
import { continuesWord, readableLive } from './transcript-text.ts';
import { clearAnswerTimer, openLine, type Line } from './transcription-line.ts';
import { sleep, TranscriberUnavailableError, type StreamSettings } from './transcription-settings.ts';
import { UtteranceAudio } from './utterance-audio.ts';

/** A socket whose cumulative finals hold more words is replaced once it has answered (each final repeats them all). */
const MAX_SOCKET_WORDS = 300;
/** Mistral decodes at most 262,144 bytes per `input_audio.append`. */
const MAX_APPEND_SAMPLES = 131_072;
const ignore = (): void => undefined;

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

/**
 * One session's stream, kept across utterances on one socket at a time. The audio of the utterance in
 * progress (and of a flushed one still awaiting its transcript) stays in RAM until its transcript arrives,
 * so a dropped or silent socket is replaced and the audio replayed: the senior never has to repeat
 * themselves. Reopening backs off across dropped sockets and is bounded (`maxReconnects`): a service that
 * accepts and drops every socket costs at most that many replays, then the utterance fails as unavailable.
 */
export class MistralTranscriptionStream implements TranscriptionStream {
  /** The socket new audio goes to. */
  private line: Line | undefined;
  private connecting: Promise<Line> | undefined;
  /** Audio appended since the last flush, sent (or to be sent on the next socket) in 100 ms chunks. */
  private readonly audio = new UtteranceAudio(() => this.sendBatch());
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
    this.audio.append(pcm);
  }

  private sendBatch(): void {
    const chunk = this.audio.seal();
    if (!chunk) return;
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
      this.audio.clear();
      return Promise.reject(failure);
    }
    if (this.audio.chunks.length === 0) return Promise.resolve('');
    const audio = this.audio.take();
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
        endReplay: this.settings.flushMode === 'end',
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
      if (this.settings.flushMode === 'end') this.end(this.line);
    });
  }

  onDelta(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    if (this.lifetime.signal.aborted) return;
    this.lifetime.abort();
    this.pending?.reject(new TranscriberUnavailableError('transcription stream closed'));
    this.audio.clear();
    if (this.line) this.drop(this.line, 'close');
  }

  // --- a flush and its answer ---

  private sendFlush(line: Line, flush: Flush): void {
    flush.owedBy.add(line);
    void line.connection.flushAudio().catch(ignore);
    this.awaitAnswer(line, flush);
  }

  /**
   * The flush's next stage if `line` has not answered within STT_FLUSH_ANSWER_MS. Judged once the socket's
   * input has been read: after the event loop stalled (a busy machine), due timers run before the I/O
   * waiting behind them, and an answer already received would be taken for none.
   */
  private awaitAnswer(line: Line, flush: Flush): void {
    clearAnswerTimer(line);
    line.answerTimer = setTimeout(() => {
      line.answerTimer = null;
      setImmediate(() => {
        if (this.pending === flush && flush.owedBy.has(line) && !line.closed) this.unanswered(line, flush);
      });
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
      this.end(line);
      return this.awaitAnswer(line, flush);
    }
    this.settings.onServiceEvent('flush_replayed');
    this.settings.logger?.debug('voice transcription flush unanswered after its end: replaying it on a fresh socket');
    flush.endReplay = true;
    this.replay(flush);
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
      this.audio.clear();
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
        const { line, events, first } = await openLine(this.settings, this.names, this.lifetime.signal);
        void this.pump(line, events, first);
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
    if (reopen === 'always' || this.audio.chunks.length > 0) this.reconnect();
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
    for (const pcm of this.audio.chunks) this.send(line, pcm);
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

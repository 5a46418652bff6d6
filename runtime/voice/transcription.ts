import type { Logger } from 'pino';
import { DeadlineError, withDeadline } from '../../machines/session/deadline.ts';
import type { EndedUtterance, TurnTakingEvent } from '../../machines/voice/turn-taking.types.ts';
import { TranscriptionTimeoutError, type TranscriberPort, type TranscriptionStream } from '../../machines/voice/voice.port.ts';
import type { Metrics } from '../metrics.ts';
import { EarlyFlush } from './early-flush.ts';
import type { VoiceLink } from './voice-link.ts';

/**
 * The senior's names for the recognizer come from the database; the stream's opening waits this
 * long for them at most (the pool has no connection timeout), then opens without them.
 */
export const CONTEXT_BIAS_BUDGET_MS = 200;

export interface TranscriptionOptions {
  transcriber: TranscriberPort;
  /** The recognizer's names, read as the session starts: the first speech rarely waits on the database for them. */
  names: Promise<string[]>;
  settings: { sttBudgetMs: number; earlyFlushMs: number; recheckMs: number; preRollMs: number; maxUtteranceMs: number; endOfTurnMaxMs: number };
  /** Aborted when the session closes. */
  signal: AbortSignal;
  metrics: Metrics;
  log: Logger;
  /** The kiosk: the utterance's whole text so far (flushed segments first) as captions. */
  link: Pick<VoiceLink, 'send'>;
  /** The turn-taking machine: the recognizer's texts of the utterance under way. */
  tell(event: TurnTakingEvent): void;
  final(utterance: EndedUtterance, transcript: string, stoppedAt: number): void;
  /** No transcript within STT_BUDGET_MS (`late`), or the service failed: counted and logged here. */
  failed(utterance: EndedUtterance, err: unknown, stoppedAt: number, late: boolean): void;
}

interface Segmenting {
  id: number;
  /** Audio waiting for the stream to open, bounded by the longest utterance. */
  pending: Int16Array[];
  pendingSamples: number;
  /** The early flush's segments and held-back pause audio (null: STT_EARLY_FLUSH_MS is off). */
  early: EarlyFlush | null;
}

/**
 * One session's transcription: the Voxtral stream (opened at first speech, kept across utterances,
 * reopened after a failure), the audio held for it, and its flushes one at a time — the early flushes
 * of a pause and each utterance's final one, in order. What to flush and when is the turn-taking
 * machine's; this keeps the audio and the texts, which never enter the machine's history.
 */
export class Transcription {
  private stream: Promise<TranscriptionStream> | null = null;
  private open: TranscriptionStream | null = null;
  private current: Segmenting | null = null;
  /** The utterance whose final transcript is awaited: the stream's words until then are its. */
  private transcribing: Segmenting | null = null;
  /** The stream answers one flush at a time: early flushes and final ones are chained. */
  private chain: Promise<void> = Promise.resolve();
  private flushing = false;

  private readonly o: TranscriptionOptions;

  constructor(o: TranscriptionOptions) {
    this.o = o;
    // A failed read is reported where the names are awaited, when the stream opens.
    o.names.catch(() => undefined);
  }

  /** Speech started: a new utterance, the stream opened if it is not. */
  start(id: number): void {
    const { earlyFlushMs, recheckMs, preRollMs, endOfTurnMaxMs } = this.o.settings;
    // With the recheck on, a pause's audio is kept up to the longest pause.
    const early = earlyFlushMs === 0 ? null : new EarlyFlush(preRollMs, recheckMs > 0 ? endOfTurnMaxMs : preRollMs);
    this.current = { id, pending: [], pendingSamples: 0, early };
    this.ensureStream();
  }

  /** The utterance's audio (pre-roll first): held back after a flush, else to the recognizer. */
  append(pcm: Int16Array): void {
    const u = this.current;
    if (!u) return;
    if (u.early?.holding) return u.early.hold(pcm);
    this.toStream(u, pcm);
  }

  /** The early flush of a pause; false when it cannot be made now (no stream, a flush in flight, one failed). */
  flush(id: number, first: boolean): boolean {
    const u = this.current;
    const early = u?.early;
    if (u?.id !== id || !early || this.flushing || early.failure !== undefined || !this.stream) return false;
    early.begin(first);
    this.flushing = true;
    this.chain = this.chain
      .then(() => this.bounded(async (signal) => {
        const stream = await this.stream!;
        this.drain(u, stream);
        return stream.flush(signal);
      }))
      .then(
        (text) => {
          early.settled(text);
          if (this.current !== u) return;
          const whole = early.text('');
          if (whole !== '') this.o.link.send({ type: 'transcript.delta', text: whole });
          this.o.tell({ type: 'FLUSHED', utterance: id, text: whole });
        },
        (err: unknown) => {
          // Told at the end of turn, whose transcription cannot be whole without it.
          early.failed(err);
          if (this.current === u) this.o.tell({ type: 'FLUSH.FAILED', utterance: id });
        },
      )
      .finally(() => (this.flushing = false));
    return true;
  }

  /** The recheck: the pause's audio since the flush goes to the recognizer, and its text is asked for again. */
  recheck(id: number): boolean {
    const u = this.current;
    if (u?.id !== id || !u.early) return false;
    for (const pcm of u.early.releaseAll()) this.toStream(u, pcm);
    return this.flush(id, false);
  }

  /** After a flush the senior goes on: the next segment, its pre-roll first. */
  resume(id: number): void {
    const u = this.current;
    if (u?.id !== id || !u.early?.holding) return;
    for (const pcm of u.early.release()) this.toStream(u, pcm);
  }

  /** Speech stopped: its final transcript within STT_BUDGET_MS, after the flushes before it. */
  finish(ended: EndedUtterance, stoppedAt: number): void {
    const u = this.current?.id === ended.id ? this.current : null;
    this.current = null;
    if (!u) return;
    this.chain = this.chain.then(async () => {
      this.transcribing = u;
      try {
        const text = await this.bounded(async (signal) => {
          if (u.early?.failure !== undefined) throw u.early.failure;
          // Flushed early, and nothing said since: the segments are the transcript.
          if (u.early?.holding) {
            this.o.metrics.earlyFlushes.inc({ outcome: 'turn' });
            return '';
          }
          if (!this.stream) throw new Error('no transcription stream');
          const stream = await this.stream;
          this.drain(u, stream);
          return stream.flush(signal);
        });
        if (!this.o.signal.aborted) this.o.final(ended, u.early ? u.early.text(text) : text.trim(), stoppedAt);
      } catch (err) {
        if (this.o.signal.aborted) return;
        this.o.metrics.speechErrors.inc({ service: 'stt' });
        this.o.log.warn({ err }, 'no transcript in time: the SOS line is spoken');
        this.drop();
        this.o.failed(ended, err, stoppedAt, err instanceof DeadlineError || err instanceof TranscriptionTimeoutError);
      } finally {
        this.transcribing = null;
      }
    });
  }

  /** Speech dropped (the microphone muted): its audio and text go. */
  forget(): void {
    this.current = null;
  }

  /** Drops the stream, open or still opening: an opening that resolves later is closed, not adopted. */
  drop(): void {
    this.open?.close();
    this.open = null;
    this.stream = null;
  }

  private bounded(work: (signal: AbortSignal) => Promise<string>): Promise<string> {
    return withDeadline(work, this.o.settings.sttBudgetMs, this.o.signal);
  }

  private ensureStream(): void {
    if (this.stream) return;
    const { transcriber, signal } = this.o;
    const opening = (async () => {
      const contextBias = await this.boundedNames();
      const stream = await transcriber.open({ contextBias, signal });
      stream.onDelta((text) => this.onDelta(text));
      return stream;
    })();
    this.stream = opening;
    opening.then(
      (stream) => {
        // Dropped while it opened (STT_BUDGET_MS ran out, the session closed): another utterance
        // must not feed it, and its socket must not stay open.
        if (signal.aborted || this.stream !== opening) return stream.close();
        this.open = stream;
        if (this.current) this.drain(this.current, stream);
      },
      () => {
        // Counted (and the SOS line spoken) when the utterance needs it; the next speech retries.
        if (this.stream === opening) this.stream = null;
      },
    );
  }

  /** `text` is the current segment's interim transcript (the transcriber accumulates its deltas). */
  private onDelta(text: string): void {
    if (this.o.signal.aborted) return;
    // The segments flushed early come first: the kiosk and the decision see the whole utterance (the
    // last words of one that ended come while it is transcribed).
    const early = (this.current ?? this.transcribing)?.early;
    const whole = early ? early.text(text) : text;
    this.o.link.send({ type: 'transcript.delta', text: whole });
    if (this.current) this.o.tell({ type: 'INTERIM', text: whole });
  }

  /** The names to favour, or none if they are not read within CONTEXT_BIAS_BUDGET_MS of the stream's opening. */
  private async boundedNames(): Promise<string[]> {
    try {
      return await withDeadline(() => this.o.names, CONTEXT_BIAS_BUDGET_MS, this.o.signal);
    } catch (err) {
      if (!this.o.signal.aborted) this.o.log.warn({ err }, 'recognizer names unavailable in time: listening without them');
      return [];
    }
  }

  /** To the recognizer, or kept until its stream is open. */
  private toStream(u: Segmenting, pcm: Int16Array): void {
    if (this.open) return this.open.append(pcm);
    // Bounded by the listener's own maximum utterance length.
    const max = (this.o.settings.maxUtteranceMs * 16) | 0;
    if (u.pendingSamples + pcm.length > max) return;
    u.pending.push(pcm);
    u.pendingSamples += pcm.length;
  }

  private drain(u: Segmenting, stream: TranscriptionStream): void {
    for (const pcm of u.pending) stream.append(pcm);
    u.pending = [];
    u.pendingSamples = 0;
  }
}

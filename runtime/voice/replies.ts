import type { Context, Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { SPANS } from '../../adapters/telemetry/turn-traces.ts';
import type { VoiceActivity, VoiceStages } from '../../machines/session/session.types.ts';
import type { OpusCodecPort, SpeakerPort } from '../../machines/voice/voice.port.ts';
import { ReplyAudio, type LineLookup } from './reply-audio.ts';
import type { VoiceServices, VoiceSessionRequest } from './voice-session.types.ts';

interface TurnTiming {
  turnId: string;
  sentAt: number;
  stages: VoiceStages;
  /** The turn's span context, for the speech span that may end after it. */
  trace?: Context;
  /** The reply's first text → its first audio. */
  speech?: Span;
}

export interface RepliesOptions {
  request: Pick<VoiceSessionRequest, 'session' | 'link' | 'output'>;
  speaker: SpeakerPort;
  lines: LineLookup;
  opus: OpusCodecPort | undefined;
  services: Pick<VoiceServices, 'metrics' | 'turns' | 'onSentenceLost'>;
  log: Logger;
  /** The session is still this socket's (not closed, not resumed elsewhere): the actor's replies are spoken here. */
  attached(): boolean;
  /** The reply's first audio frame went out: it is playing at the kiosk. */
  playing(): void;
  /** A reply started, or ended (`played`: the kiosk played it out; otherwise it was cut or replaced). */
  started(): void;
  ended(played: boolean): void;
  /** The actor's voice state (ops views): a handful of events per turn, never one per frame. */
  state(state: VoiceActivity, stages?: VoiceStages): void;
}

/**
 * The session's reply audio, one at a time: started by the actor's first text of a turn (or a line
 * spoken without one — the SOS line, the check-in), cut by barge-in or a newer turn, played out when
 * the kiosk says so or when it should have; and the turn's stage timings up to its first audio.
 */
export class Replies {
  reply: ReplyAudio | null = null;
  private timing: TurnTiming | null = null;
  private playbackTimer: NodeJS.Timeout | null = null;

  private readonly o: RepliesOptions;

  constructor(o: RepliesOptions) {
    this.o = o;
  }

  get playing(): boolean {
    return this.reply?.playing === true;
  }

  /** Speaks the actor's replies as they are written; returns the unsubscribe. */
  follow(): () => void {
    const { actor } = this.o.request.session;
    const delta = actor.on('reply.delta', (e) => {
      if (!this.o.attached()) return;
      // Transcript → the reply's first text: recorded before its first audio, which it feeds.
      this.firstToken(e.turnId);
      this.replyFor(e.turnId)?.delta(e.text);
    });
    const done = actor.on('reply.done', (e) => {
      if (!this.o.attached()) return;
      // A reply with no delta (a pre-synthesized line) has its first text here.
      this.firstToken(e.turnId);
      if (!e.interrupted) return this.replyFor(e.turnId)?.finish(e.text);
      // Cut by something else than this session (a lost socket, a close): its audio stops too.
      if (this.reply?.turnId === e.turnId) this.cut(undefined, false);
    });
    return () => {
      delta.unsubscribe();
      done.unsubscribe();
    };
  }

  /** Speech with no transcript: the pre-synthesized SOS line, spoken directly (no model, no turn in the window). */
  speakSos(turnId: string, stoppedAt: number, err: unknown): void {
    const { request: { session, link }, services } = this.o;
    const startedAt = Date.now();
    this.cut();
    const text = session.actor.getSnapshot().context.cacheFlux.sosFallback();
    services.turns?.traces.untranscribed({ sessionId: session.sessionId, seniorId: session.seniorId, turnId }, stoppedAt, err);
    this.turnSent(turnId, { turnId });
    this.speakLine(turnId, text);
    link.send({ type: 'reply.done', turnId, text, flux: 'sos', latencyMs: Date.now() - startedAt, reason: 'transcription' });
    services.metrics.sosFallbacks.inc({ reason: 'transcription' });
  }

  /** A turn was sent: its timings from now. */
  turnSent(turnId: string, stages: VoiceStages): TurnTiming {
    const timing: TurnTiming = { turnId, sentAt: performance.now(), stages };
    this.setTiming(timing);
    return timing;
  }

  /** The current turn's reply audio; a reply of another turn replaces (and clears) the one before. */
  replyFor(turnId: string): ReplyAudio | null {
    if (this.reply?.turnId === turnId) return this.reply.cancelled ? null : this.reply;
    this.cut();
    return this.start(turnId);
  }

  /** The idle check-in's line, under a voice turnId of its own: no model, and not a turn. */
  speakCheckin(turnId: string, text: string): void {
    this.speakLine(turnId, text);
    this.o.request.link.send({ type: 'reply.done', turnId, text, flux: 'checkin', latencyMs: 0 });
  }

  /** A line spoken without a turn (the SOS line for speech with no transcript, the check-in). */
  speakLine(turnId: string, text: string): void {
    this.start(turnId).finish(text);
    this.firstToken(turnId);
  }

  firstToken(turnId: string): void {
    const t = this.timing;
    if (t?.turnId !== turnId || t.stages.firstTokenMs !== undefined) return;
    t.stages = { ...t.stages, firstTokenMs: Math.round(performance.now() - t.sentAt) };
    const turns = this.o.services.turns;
    if (t.trace && turns) t.speech = turns.traces.startUnder(t.trace, SPANS.speech);
  }

  /**
   * Stops the reply being spoken: the kiosk clears its audio, the model and speech requests are
   * aborted, and the actor keeps only what the senior heard (unless told otherwise).
   */
  cut(playedMs?: number, tellActor = true): void {
    const reply = this.reply;
    if (!reply || reply.cancelled) return;
    const heard = reply.heard(playedMs);
    reply.cancel();
    this.reply = null;
    if (reply.started) this.o.request.link.send({ type: 'reply.audio.clear', turnId: reply.turnId });
    if (tellActor) this.o.request.session.actor.send({ type: 'INTERRUPT', turnId: reply.turnId, heard });
    this.o.ended(false);
  }

  /** The kiosk's `interrupt`: true when it cut this reply (else the turn is another's, or over). */
  interrupt(turnId: string, playedMs?: number): boolean {
    if (this.reply?.turnId !== turnId || this.reply.cancelled) return false;
    this.o.services.metrics.bargeIn.inc({ outcome: 'interrupted' });
    this.cut(playedMs);
    return true;
  }

  playbackProgress(turnId: string, playedMs: number): void {
    if (this.reply?.turnId === turnId) this.reply.reportPlayed(playedMs);
  }

  playbackDone(turnId: string): void {
    if (this.reply?.turnId !== turnId) return;
    this.reply.playbackDone();
    if (!this.reply.playing) this.endOfPlayback();
  }

  close(): void {
    this.reply?.cancel();
    this.reply = null;
    this.setTiming(null);
    if (this.playbackTimer) clearTimeout(this.playbackTimer);
  }

  /** The next turn's timings; the previous one's speech span, still waiting for audio, ends without it. */
  setTiming(timing: TurnTiming | null): void {
    this.timing?.speech?.setAttribute('kohami.speech.audio', false);
    this.timing?.speech?.end();
    this.timing = timing;
  }

  private start(turnId: string): ReplyAudio {
    const { request: { output }, services } = this.o;
    const reply = new ReplyAudio({
      turnId,
      link: this.o.request.link,
      speaker: this.o.speaker,
      lines: this.o.lines,
      sampleRate: output.sampleRate,
      ...(output.encoding === 'opus' && this.o.opus ? { opus: this.o.opus } : {}),
      onFirstAudio: () => this.firstAudio(turnId),
      onSpeechError: (err) => {
        services.onSentenceLost();
        this.o.log.warn({ err }, 'a sentence could not be synthesized');
      },
    });
    this.reply = reply;
    this.o.started();
    void reply.sent.then(() => this.watchPlayback(reply));
    return reply;
  }

  private firstAudio(turnId: string): void {
    this.o.playing();
    const t = this.timing;
    if (t?.turnId !== turnId) return this.o.state('speaking');
    t.stages = { ...t.stages, firstAudioMs: Math.round(performance.now() - t.sentAt) };
    const { stages } = t;
    if (t.speech) {
      t.speech.setAttributes({ 'kohami.speech.audio': true, 'kohami.first_audio_ms': stages.firstAudioMs! });
      t.speech.end();
      t.speech = undefined;
    }
    const observe = (stage: string, ms: number | undefined) => ms !== undefined && this.o.services.metrics.voiceStage.observe({ stage }, ms / 1000);
    observe('endpointing', stages.endpointingMs);
    observe('transcription', stages.transcriptionMs);
    observe('first_token', stages.firstTokenMs);
    observe('first_audio', stages.firstAudioMs);
    this.o.state('speaking', stages);
  }

  /** Once the audio is all sent, played out when the kiosk says so, or when it should have been. */
  private watchPlayback(reply: ReplyAudio): void {
    if (this.playbackTimer) clearTimeout(this.playbackTimer);
    const check = () => {
      this.playbackTimer = null;
      if (this.reply !== reply || reply.cancelled) return;
      if (reply.playing) this.playbackTimer = setTimeout(check, 100).unref();
      else this.endOfPlayback();
    };
    check();
  }

  private endOfPlayback(): void {
    this.reply = null;
    this.o.ended(true);
  }
}

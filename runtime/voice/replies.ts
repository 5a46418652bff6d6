import type { Context, Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { SPANS } from '../../adapters/telemetry/turn-traces.ts';
import type { VoiceActivity, VoiceStages } from '../../machines/session/session.types.ts';
import type { OpusCodecPort, SpeakerPort } from '../../machines/voice/voice.port.ts';
import type { AudioFormat } from '../protocol/server-frames.ts';
import type { LiveSession } from '../sessions/session-registry.ts';
import { ReplyAudio, type LineLookup } from './reply-audio.ts';
import type { VoiceLink } from './voice-link.ts';
import type { VoiceServices } from './voice-session.types.ts';

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
  session: LiveSession;
  link: VoiceLink;
  output: AudioFormat;
  speaker: SpeakerPort;
  lines: LineLookup;
  opus: OpusCodecPort | undefined;
  services: Pick<VoiceServices, 'metrics' | 'turns' | 'onSentenceLost'>;
  log: Logger;
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
    if (reply.started) this.o.link.send({ type: 'reply.audio.clear', turnId: reply.turnId });
    if (tellActor) this.o.session.actor.send({ type: 'INTERRUPT', turnId: reply.turnId, heard });
    this.o.ended(false);
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
    const { output, services } = this.o;
    const reply = new ReplyAudio({
      turnId,
      link: this.o.link,
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

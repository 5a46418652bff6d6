import type { Context, Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { SPANS, type TurnTraces, type VoiceTurnTiming } from '../../adapters/telemetry/turn-traces.ts';
import { DeadlineError, withDeadline } from '../../machines/session/deadline.ts';
import type { VoiceActivity, VoiceStages } from '../../machines/session/session.types.ts';
import { endpointOutcome, overReply } from '../../machines/voice/barge-in.ts';
import { endOfTurn, preemptAfterMs, type EndOfTurn, type EndOfTurnSettings } from '../../machines/voice/end-of-turn.ts';
import { isPause, PAUSES_PER_SESSION_MAX, recordPause, type PauseProfile } from '../../machines/voice/pause-profile.ts';
import { TranscriptionTimeoutError, type ListenerEvents, type OpusCodecPort, type OpusDecoderPort, type SpeakerPort, type TranscriberPort, type TranscriptionStream } from '../../machines/voice/voice.port.ts';
import type { AudioFormat } from '../protocol/server-frames.ts';
import type { Metrics } from '../metrics.ts';
import type { LiveSession } from '../sessions/session-registry.ts';
import { EarlyFlush } from './early-flush.ts';
import { CHECKIN_LINE, IdleCheckin } from './idle-checkin.ts';
import type { PreemptiveTurns } from './preemption/preemptive-turns.ts';
import type { PreemptiveTurn } from './preemption/preemptive-turn.ts';
import { AudioGaps } from './audio-gaps.ts';
import { ReplyAudio, type LineLookup } from './reply-audio.ts';
import type { VoiceLink } from './voice-link.ts';

export type { VoiceLink } from './voice-link.ts';

/** The microphone front end of one session (V1's Listener, behind what the session uses of it). */
export interface SessionListener {
  push(pcm: Int16Array): Promise<void>;
  readonly speechMs: number;
  /** Confident speech stopped inside an utterance: the endpointing silence is counting. */
  readonly paused: boolean;
  /** ms of silence in the current pause (0 outside one). */
  readonly silenceMs: number;
  /** Pauses started so far (tells a new pause from the one already decided). */
  readonly pauses: number;
  /** The speech's recent level against the utterance's, dB (negative: falling); null when unknown. */
  readonly levelDb: number | null;
  /** The end-of-turn decision: end the utterance once the pause's silence reaches `silenceMs` (now if it has). */
  endpointAt(silenceMs: number): void;
  reset(): void;
  close(): void;
}

/** What every voice session of the process shares. */
export interface VoiceServices {
  /** Null offline (no MISTRAL_API_KEY): there is no speech-to-text, typed turns are still spoken. */
  transcriber: TranscriberPort | null;
  speaker: SpeakerPort;
  /** Opus on the kiosk socket (docs/voice.md#opus); absent: the sessions negotiate PCM only. */
  opus?: OpusCodecPort;
  createListener(events: ListenerEvents): Promise<SessionListener>;
  /** The session's pre-synthesized lines (SOS, neutral, CacheFlux replies with the senior's name) at `sampleRate`, warming up. */
  linesFor(session: LiveSession, sampleRate: number): { get: LineLookup; close(): void };
  /** RGPD erasure: the senior's kept personal lines (their greetings' audio) go. Returns how many. */
  invalidateSenior(seniorId: string): number;
  /** Words the recognizer should favour for this senior (preferred name; contact names under consent). */
  contextBias(session: LiveSession): Promise<string[]>;
  /**
   * `sttDelayMs`: how far behind the audio the recognizer's words come (STT_STREAMING_DELAY_MS);
   * `earlyFlushMs`: the pause's silence at which its text is flushed (STT_EARLY_FLUSH_MS, 0: off);
   * `recheckMs`: the silence at which a flushed text that did not close is asked for again (STT_RECHECK_MS, 0: off);
   * `preRollMs`: the audio the listener hands out before each utterance's speech.
   */
  settings: { sttBudgetMs: number; earlyFlushMs: number; recheckMs: number; preRollMs: number; sttDelayMs: number; bargeInMinMs: number; maxUtteranceMs: number; endOfTurn: EndOfTurnSettings };
  /**
   * Optional: writes back the mid-sentence pauses (ms, numbers only) a session heard, folded into the
   * senior's stored pause profile, if the `conversation` consent still holds. Called once, at close,
   * only for a session that was given a profile (the consent held at its start). Must not throw.
   */
  savePauses?: (seniorId: string, pauses: readonly number[]) => void;
  /** Resolves once the pause profiles being written have been (tests, shutdown). */
  pausesSettled?: () => Promise<void>;
  /** A sentence of a reply could not be spoken at all (counted once, by the service that failed). */
  onSentenceLost(): void;
  metrics: Metrics;
  logger: Logger;
  /** Taking turns over a reply: FALSE_INTERRUPTION_MS (speech with no word pauses the reply) and IDLE_CHECKIN_MS (0: off). */
  pacing: { falseInterruptionMs: number; idleCheckinMs: number };
  /**
   * Optional: called with the interim transcript when the senior stops speaking (the endpointing
   * silence starts counting) and again if the interim changes during that silence, so the turn's
   * work (its embedding, shared by recall and the semantic cache) starts before the endpoint. Fire
   * and forget: it must not throw nor log the text; a resumed sentence simply calls it again later.
   */
  prefetchTurn?: (seniorId: string, transcript: string) => void;
  /** The preemptive turn (PREEMPTIVE_TURN): absent when off. */
  preemptiveTurns?: PreemptiveTurns;
  /**
   * Where a turn goes (the registry's `turn`, which opens its span and hands over its context) and the
   * turns' spans. Absent (tests of the voice session alone): turns go straight to the actor, untraced.
   */
  turns?: { start(session: LiveSession, turnId: string, transcript: string, voice: VoiceTurnTiming | undefined, opened: (trace: Context) => void): void; traces: TurnTraces };
}

export interface VoiceSessionHandle {
  /** False offline (no speech-to-text), and from the moment the session's speech detectors failed to load. */
  readonly voiceInput: boolean;
  pushAudio(pcm: Int16Array): void;
  /** One Opus microphone packet (an Opus input session): null when taken, else why it was dropped (malformed). */
  pushPacket(packet: Uint8Array): string | null;
  typedTurn(turnId: string, transcript: string): void;
  interrupt(turnId: string, playedMs?: number): void;
  playbackProgress(turnId: string, playedMs: number): void;
  playbackDone(turnId: string): void;
  mute(muted: boolean): void;
  close(): void;
}

export interface VoiceSessionRequest {
  session: LiveSession;
  link: VoiceLink;
  /** The microphone's format; absent: PCM s16le at 16 kHz. */
  input?: AudioFormat;
  output: AudioFormat;
  aec: boolean;
  /**
   * The kiosk gates its microphone (session.start `audio.kiosk.gate`): a gap in its audio is silence
   * and is filled as such. Otherwise a gap is a network stall, whose audio comes late: filling it would
   * put silence mid-word (a turn ended mid-sentence) before the late audio.
   */
  gate?: boolean;
  /** The next voice turn's id (`v1`, `v2` …), admitted among the session's turnIds. */
  nextTurnId(): string;
}

export interface VoiceSessionFactory {
  /** Whether sessions may negotiate Opus (the codec is there). */
  readonly opus: boolean;
  create(request: VoiceSessionRequest): VoiceSessionHandle;
}

/**
 * The senior's names for the recognizer come from the database; the stream's opening waits this
 * long for them at most (the pool has no connection timeout), then opens without them.
 */
export const CONTEXT_BIAS_BUDGET_MS = 200;

export function voiceSessionFactory(services: VoiceServices): VoiceSessionFactory {
  return { opus: services.opus !== undefined, create: (request) => new VoiceSession(services, request) };
}

interface Utterance {
  /** Interim transcript so far (display and the barge-in rule only). */
  interim: string;
  /** Audio waiting for the transcription stream to open. */
  pending: Int16Array[];
  pendingSamples: number;
  /** When confirmed speech last grew: the endpointing stage runs from here to speech stopped. */
  lastSpeechAt: number;
  lastSpeechMs: number;
  /** The listener's pause (endpointing silence counting) as last seen after a push. */
  paused: boolean;
  /** The interim text last handed to prefetchTurn (never the same text twice). */
  prefetched: string;
  /** The listener's pause decided last (its `pauses` count), and the interim as that pause began. */
  pause: number;
  interimAtPause: string;
  /** Audio of the utterance since speech_started (unset until the pre-roll and onset have come). */
  sinceStartMs?: number;
  /** It paused the reply, which then resumed: a false interruption (counted once). */
  resumed?: boolean;
  /** The turn's work started on the interim transcript during this pause (the preemptive turn). */
  speculation: PreemptiveTurn | null;
  /** Speculations started in this utterance (bounded by the preemption's `maxPerUtterance`). */
  speculations: number;
  /** The early flush's segments and held-back pause audio (null: STT_EARLY_FLUSH_MS is off). */
  early: EarlyFlush | null;
}

/**
 * The end-of-turn wait is counted in audio by the listener; this timer is its backstop in time, for a
 * kiosk whose audio stops arriving during the pause (the wait plus a kiosk chunk's worth of slack).
 */
export const END_OF_TURN_BACKSTOP_SLACK_MS = 250;

/** The listener's silence lags the audio by up to one Silero window (32 ms) and one kiosk frame (20 ms), rounded up. */
const SILENCE_LAG_MS = 60;

interface TurnTiming {
  turnId: string;
  sentAt: number;
  stages: VoiceStages;
  /** The turn's span context, for the speech span that may end after it. */
  trace?: Context;
  /** The reply's first text → its first audio. */
  speech?: Span;
}

/**
 * One kiosk's voice session: microphone → listener (gate, Silero, endpointing) → Voxtral realtime
 * → the actor's TURN; the actor's reply → sentences → speech → binary frames; barge-in that keeps
 * only what the senior heard. The actor sees speech started/stopped (as its voice state) and the
 * final transcript, never a frame. Audio and transcripts only pass through here, in RAM.
 */
class VoiceSession implements VoiceSessionHandle {
  private readonly closed = new AbortController();
  private readonly log: Logger;
  private listener: SessionListener | null = null;
  private readonly listenerReady: Promise<void>;
  private stream: Promise<TranscriptionStream> | null = null;
  private openStream: TranscriptionStream | null = null;
  private utterance: Utterance | null = null;
  /** The utterance whose final transcript is awaited: the stream's words until then are its. */
  private transcribing: Utterance | null = null;
  /** Utterances are transcribed one after the other (a stream holds one flush at a time). */
  private finishing: Promise<void> = Promise.resolve();
  private reply: ReplyAudio | null = null;
  private timing: TurnTiming | null = null;
  private muted = false;
  private listenerFailed = false;
  private playbackTimer: NodeJS.Timeout | null = null;
  /** The utterance whose speech (no word yet) paused the reply, which resumes when it ends without a turn. */
  private pausedFor: Utterance | null = null;
  private readonly idle: IdleCheckin;
  private readonly lines: { get: LineLookup; close(): void };
  /** The recognizer's names, read as the session starts: the first speech rarely waits on the database for them. */
  private readonly names: Promise<string[]>;
  private readonly unsubscribe: Array<() => void> = [];
  /** The end-of-turn wait's backstop (one at a time). */
  private endTimer: NodeJS.Timeout | null = null;
  /** This senior's pause profile, given only under the `conversation` consent (null: no use, no update). */
  private pauseProfile: PauseProfile | null;
  /** Mid-sentence pauses heard in this session (ms), written back at close; bounded. */
  private readonly heardPauses: number[] = [];
  /** The replies' speaker: with the preemptive turn, it hands over a first sentence already under way. */
  private readonly speaker: SpeakerPort;
  /** Starts the speculative turn when the end of the pause comes within the preemption's lead (one at a time). */
  private preemptTimer: NodeJS.Timeout | null = null;
  /** Opus input: the microphone stream's decoder (to 16 kHz), freed at close. */
  private readonly decoder: OpusDecoderPort | null;
  /** A gap in a gating kiosk's microphone audio reaches the listener as silence; null: the kiosk does not gate. */
  private readonly gaps: AudioGaps | null;

  private readonly services: VoiceServices;
  private readonly request: VoiceSessionRequest;

  constructor(
    services: VoiceServices,
    request: VoiceSessionRequest,
  ) {
    this.services = services;
    this.request = request;
    const { session } = request;
    this.log = services.logger.child({ sessionId: session.sessionId, voice: true });
    // Loaded with the senior's profile at session start, only while the `conversation` consent holds.
    this.pauseProfile = session.actor.getSnapshot().context.profile.pauses ?? null;
    this.decoder = request.input?.encoding === 'opus' ? opusOf(services).decoder() : null;
    this.gaps = request.gate ? new AudioGaps({ maxFillMs: services.settings.endOfTurn.maxMs + END_OF_TURN_BACKSTOP_SLACK_MS, fill: (pcm) => this.listen(pcm) }) : null;
    this.lines = services.linesFor(session, request.output.sampleRate);
    this.speaker = services.preemptiveTurns?.speakerFor(session.seniorId, services.speaker) ?? services.speaker;
    this.idle = new IdleCheckin({ idleMs: this.voiceInput ? services.pacing.idleCheckinMs : 0, speak: () => this.checkIn() });
    this.names = this.voiceInput ? services.contextBias(session) : Promise.resolve([]);
    // A failed read is reported where the names are awaited, when the stream opens.
    this.names.catch(() => undefined);
    this.listenerReady = this.voiceInput
      ? services.createListener({
          speechStarted: () => this.onSpeechStarted(),
          audio: (pcm) => this.onUtteranceAudio(pcm),
          speechStopped: () => this.onSpeechStopped(),
          speechResumed: (pauseMs) => this.onSpeechResumed(pauseMs),
        }).then(
          (listener) => {
            if (this.closed.signal.aborted) listener.close();
            else this.listener = listener;
          },
          (err: unknown) => {
            this.listenerFailed = true;
            this.log.error({ err }, 'voice detectors failed to load: voice input is off for this session');
            // session.ready said voiceInput: true; the kiosk learns it is not listened to (the gateway
            // also answers each later microphone frame with this code, at most once a second).
            if (!this.closed.signal.aborted) {
              request.link.send({ type: 'error', code: 'speech_unavailable', message: 'voice input is unavailable for this session (speech detection failed to start): send typed turns' });
            }
          },
        )
      : Promise.resolve();
    const delta = session.actor.on('reply.delta', (e) => {
      if (!this.attached) return;
      // Transcript → the reply's first text: recorded before its first audio, which it feeds.
      this.firstToken(e.turnId);
      this.replyFor(e.turnId)?.delta(e.text);
    });
    const done = session.actor.on('reply.done', (e) => {
      if (!this.attached) return;
      // A reply with no delta (a pre-synthesized line) has its first text here.
      this.firstToken(e.turnId);
      if (e.interrupted) {
        // Cut by something else than this session (a lost socket, a close): its audio stops too.
        if (this.reply?.turnId === e.turnId) this.cutReply(undefined, false);
        return;
      }
      this.replyFor(e.turnId)?.finish(e.text);
    });
    // The session ended (or was replaced): its speech services go with it, whatever the socket does.
    const ended = session.actor.on('SessionClosed', () => this.close());
    this.unsubscribe.push(() => delta.unsubscribe(), () => done.unsubscribe(), () => ended.unsubscribe());
    this.state('listening');
    // Last: a constructor that threw has no close() to give the count back.
    services.metrics.voiceSessions.inc();
  }

  /** Off offline (no speech-to-text) and when the session's speech detectors failed to load. */
  get voiceInput(): boolean {
    return this.services.transcriber !== null && !this.listenerFailed;
  }

  private get attached(): boolean {
    return !this.closed.signal.aborted && this.request.session.link === this.request.link;
  }

  // --- microphone ---

  pushAudio(pcm: Int16Array): void {
    if (!this.closed.signal.aborted) this.gaps?.heard(pcm.length);
    this.listen(pcm);
  }

  private listen(pcm: Int16Array): void {
    if (!this.voiceInput || this.muted || this.closed.signal.aborted) return;
    // Half-duplex kiosk (no echo cancellation): the microphone hears the reply, so it is not listened to.
    if (!this.request.aec && this.reply?.playing) return;
    if (!this.listener) {
      if (!this.listenerFailed) void this.listenerReady.then(() => this.listener && this.feed(pcm));
      return;
    }
    this.feed(pcm);
  }

  pushPacket(packet: Uint8Array): string | null {
    if (!this.decoder) return 'this session negotiated PCM microphone audio, not Opus';
    if (!this.voiceInput || this.muted || this.closed.signal.aborted) return null;
    let pcm: Int16Array;
    try {
      pcm = this.decoder.decode(packet);
    } catch (err) {
      return `a microphone frame is one Opus packet: ${err instanceof Error ? err.message : String(err)} (frame dropped)`;
    }
    this.pushAudio(pcm);
    return null;
  }

  private feed(pcm: Int16Array): void {
    this.listener!.push(pcm).then(this.afterPush, this.pushFailed);
  }

  // Bound once: the microphone path runs 50 times a second per session and creates no closure per frame.
  private readonly pushFailed = (err: unknown): void => this.log.warn({ err }, 'voice detector failed on a window');

  private readonly afterPush = (): void => {
    const u = this.utterance;
    if (!u || !this.listener) return;
    const speechMs = this.listener.speechMs;
    if (speechMs > u.lastSpeechMs) {
      u.lastSpeechMs = speechMs;
      u.lastSpeechAt = performance.now();
    }
    const paused = this.listener.paused;
    if (paused && this.listener.pauses !== u.pause) {
      // A new pause (even one that followed another within this chunk): decide how long it may last.
      u.pause = this.listener.pauses;
      u.interimAtPause = u.interim;
      u.paused = true;
      this.prefetch(u);
      this.decideEndOfTurn(u);
    } else if (paused !== u.paused) {
      u.paused = paused;
      if (!paused) {
        this.clearEndTimer();
        // The senior goes on: the speculative turn was not the turn.
        this.dropSpeculation(u);
      }
    }
    if (paused && u.early) {
      const { earlyFlushMs, recheckMs } = this.services.settings;
      const silenceMs = this.listener.silenceMs;
      if (u.early.pause !== u.pause && silenceMs >= earlyFlushMs) this.flushEarly(u, u.early);
      else if (recheckMs > 0 && silenceMs >= recheckMs && u.early.recheckDue(u.pause)) this.recheckEarly(u, u.early);
    }
    // The decision may have ended the utterance.
    if (this.utterance === u) this.considerBargeIn();
  };

  /**
   * Asks the end-of-turn decision (at a pause's start, and at each interim change during it) and hands
   * its wait to the listener, which ends the utterance when the pause's silence reaches it. Cheap: a
   * few string tests on the interim's last words, a handful of times per pause, never per frame.
   */
  private decideEndOfTurn(u: Utterance): void {
    const listener = this.listener;
    if (!listener?.paused || this.utterance !== u) return;
    const final = u.early?.finalFor(u.pause) === true;
    const decision = endOfTurn({
      interim: u.interim,
      interimSincePause: u.interim !== u.interimAtPause,
      final,
      silenceMs: listener.silenceMs,
      levelDb: listener.levelDb,
      profile: this.pauseProfile,
      settings: this.services.settings.endOfTurn,
    });
    this.clearEndTimer();
    if (!decision.end) {
      const pause = u.pause;
      this.endTimer = setTimeout(() => {
        this.endTimer = null;
        // The audio stopped coming (or lags): the wait has passed in time, the pause is still the same one.
        if (this.utterance === u && this.listener?.paused && this.listener.pauses === pause) this.listener.endpointAt(0);
      }, decision.waitMs + END_OF_TURN_BACKSTOP_SLACK_MS);
      this.endTimer.unref();
    }
    this.considerPreemption(u, decision, final);
    listener.endpointAt(decision.endAtMs);
  }

  /**
   * The early flush: the recognizer's final text of what was said before this pause, asked for a
   * short way into it, so the decision reads the real ending. Chained with the utterances'
   * transcriptions (one flush at a time on the stream); the end of turn's transcription waits for it.
   */
  private flushEarly(u: Utterance, early: EarlyFlush): void {
    if (early.pending || early.failure !== undefined || !this.stream) return;
    early.begin(u.pause);
    const flushing = this.finishing
      .then(() =>
        withDeadline(
          async (signal) => {
            const stream = await this.stream!;
            this.drainPending(u, stream);
            return stream.flush(signal);
          },
          this.services.settings.sttBudgetMs,
          this.closed.signal,
        ),
      )
      .then(
        (text) => {
          early.settled(text);
          if (this.utterance !== u) return;
          u.interim = early.text('');
          if (u.interim !== '') this.request.link.send({ type: 'transcript.delta', text: u.interim });
          this.prefetch(u);
          this.decideEndOfTurn(u);
        },
        // Told at the end of turn, whose transcription cannot be whole without it.
        (err: unknown) => early.failed(err),
      );
    early.pending = flushing;
    this.finishing = flushing;
  }

  /** Null when STT_EARLY_FLUSH_MS is off; with the recheck on, a pause's audio is kept up to the longest pause. */
  private newEarlyFlush(): EarlyFlush | null {
    const { earlyFlushMs, recheckMs, preRollMs, endOfTurn } = this.services.settings;
    if (earlyFlushMs === 0) return null;
    return new EarlyFlush(preRollMs, recheckMs > 0 ? endOfTurn.maxMs : preRollMs);
  }

  /** The recheck: the pause's audio since the flush goes to the recognizer, and its text is asked for again. */
  private recheckEarly(u: Utterance, early: EarlyFlush): void {
    for (const pcm of early.releaseAll()) this.toStream(u, pcm);
    this.services.metrics.earlyFlushes.inc({ outcome: 'rechecked' });
    this.flushEarly(u, early);
  }

  private clearEndTimer(): void {
    if (this.endTimer) clearTimeout(this.endTimer);
    this.endTimer = null;
    if (this.preemptTimer) clearTimeout(this.preemptTimer);
    this.preemptTimer = null;
  }

  /**
   * The preemptive turn: once the end of this pause is within the lead, the turn's work starts on the
   * interim transcript (the end-of-turn decision asks again at the lead, if it is further off). A new
   * interim replaces the speculation; CacheFlux's instant answers and a session busy with a reply
   * are left to the real turn.
   */
  private considerPreemption(u: Utterance, decision: EndOfTurn, final: boolean): void {
    const preemption = this.services.preemptiveTurns;
    if (!preemption) return;
    const text = u.interim.trim();
    if (u.speculation?.transcript === text) return;
    this.dropSpeculation(u);
    if (text === '' || u.speculations >= preemption.maxPerUtterance || preemption.answersAtOnce(text)) return;
    // A final text has nothing left to catch up with.
    const catchUpMs = final ? 0 : this.services.settings.sttDelayMs - SILENCE_LAG_MS;
    const afterMs = preemptAfterMs(decision, this.listener?.silenceMs ?? 0, { leadMs: preemption.leadMs, catchUpMs });
    if (afterMs > 0) {
      this.preemptTimer = setTimeout(() => {
        this.preemptTimer = null;
        this.decideEndOfTurn(u);
      }, afterMs);
      this.preemptTimer.unref();
      return;
    }
    try {
      u.speculation = preemption.start(this.request.session.actor, text, { speaker: this.services.speaker, lines: (line) => this.lines.get(line), opus: this.request.output.encoding === 'opus' });
    } catch (err) {
      // A head start only: the turn does its own work. The text is never logged.
      this.log.warn({ err }, 'preemptive turn failed to start');
    }
    if (u.speculation) u.speculations += 1;
  }

  private dropSpeculation(u: Utterance): void {
    u.speculation?.abort();
    u.speculation = null;
  }

  /** A pause that speech ended (not the turn): one number for the senior's profile, under consent only. */
  private onSpeechResumed(pauseMs: number): void {
    this.clearEndTimer();
    const u = this.utterance;
    // After an early flush the senior goes on: the next segment, its pre-roll first.
    if (u?.early?.holding) {
      for (const pcm of u.early.release()) this.toStream(u, pcm);
      this.services.metrics.earlyFlushes.inc({ outcome: 'resumed' });
    }
    if (this.pauseProfile === null || !isPause(pauseMs)) return;
    this.pauseProfile = recordPause(this.pauseProfile, pauseMs);
    if (this.heardPauses.length < PAUSES_PER_SESSION_MAX) this.heardPauses.push(Math.round(pauseMs));
  }

  /** While endpointing waits, the turn's work may start on the interim transcript (once per distinct text). */
  private prefetch(u: Utterance): void {
    const prefetchTurn = this.services.prefetchTurn;
    const text = u.interim.trim();
    if (!prefetchTurn || text === '' || text === u.prefetched) return;
    u.prefetched = text;
    try {
      prefetchTurn(this.request.session.seniorId, text);
    } catch (err) {
      // A warm-up only: the turn itself does the work if this failed. The text is never logged.
      this.log.warn({ err }, 'turn prefetch failed');
    }
  }

  private onSpeechStarted(): void {
    const now = performance.now();
    this.utterance = { interim: '', pending: [], pendingSamples: 0, lastSpeechAt: now, lastSpeechMs: 0, paused: false, prefetched: '', pause: -1, interimAtPause: '', speculation: null, speculations: 0, early: this.newEarlyFlush() };
    this.request.link.send({ type: 'vad', state: 'speech_started' });
    if (!this.reply?.playing) this.state('user_speaking');
    this.ensureStream();
    // The senior speaks: no check-in over it, and the next silence may have one.
    this.idle.heard();
  }

  private onUtteranceAudio(pcm: Int16Array): void {
    const u = this.utterance;
    if (!u) return;
    // The first audio is the pre-roll and onset, from before speech_started.
    u.sinceStartMs = u.sinceStartMs === undefined ? 0 : u.sinceStartMs + pcm.length / 16;
    if (u.early?.holding) return u.early.hold(pcm);
    this.toStream(u, pcm);
  }

  /** To the recognizer, or kept until its stream is open. */
  private toStream(u: Utterance, pcm: Int16Array): void {
    if (this.openStream) return this.openStream.append(pcm);
    // Bounded by the listener's own maximum utterance length.
    const max = (this.services.settings.maxUtteranceMs * 16) | 0;
    if (u.pendingSamples + pcm.length > max) return;
    u.pending.push(pcm);
    u.pendingSamples += pcm.length;
  }

  private onSpeechStopped(): void {
    const u = this.utterance;
    this.utterance = null;
    this.clearEndTimer();
    this.request.link.send({ type: 'vad', state: 'speech_stopped' });
    if (!u) return;
    const stoppedAt = performance.now();
    if (!this.reply?.playing) this.state('thinking');
    this.finishing = this.finishing.then(async () => {
      this.transcribing = u;
      try {
        await this.transcribe(u, stoppedAt);
      } finally {
        this.transcribing = null;
      }
    });
  }

  /** `text` is the utterance's whole interim transcript so far (the transcriber accumulates its deltas). */
  private onInterim(text: string): void {
    if (this.closed.signal.aborted) return;
    const u = this.utterance;
    // The segments flushed early come first: the kiosk and the decision see the whole utterance (the
    // last words of one that ended come while it is transcribed).
    const early = (u ?? this.transcribing)?.early;
    const whole = early ? early.text(text) : text;
    this.request.link.send({ type: 'transcript.delta', text: whole });
    if (!u) return;
    u.interim = whole;
    if (u.paused) {
      this.prefetch(u);
      // The recognizer caught up with the words before the pause: the ending may now tell.
      this.decideEndOfTurn(u);
    }
    if (this.utterance === u) this.considerBargeIn();
  }

  /** Opened at first speech and kept for the next utterances; reopened after a failure. */
  private ensureStream(): void {
    const transcriber = this.services.transcriber;
    if (this.stream || !transcriber) return;
    const opening = (async () => {
      const contextBias = await this.boundedContextBias();
      const stream = await transcriber.open({ contextBias, signal: this.closed.signal });
      stream.onDelta((text) => this.onInterim(text));
      return stream;
    })();
    this.stream = opening;
    opening.then(
      (stream) => {
        // Dropped while it opened (STT_BUDGET_MS ran out, the session closed): another utterance
        // must not feed it, and its socket must not stay open.
        if (this.closed.signal.aborted || this.stream !== opening) return stream.close();
        this.openStream = stream;
        const u = this.utterance;
        if (u) this.drainPending(u, stream);
      },
      () => {
        // Counted (and the SOS line spoken) when the utterance needs it; the next speech retries.
        if (this.stream === opening) this.stream = null;
      },
    );
  }

  /** The names to favour, or none if they are not read within CONTEXT_BIAS_BUDGET_MS of the stream's opening. */
  private async boundedContextBias(): Promise<string[]> {
    try {
      return await withDeadline(() => this.names, CONTEXT_BIAS_BUDGET_MS, this.closed.signal);
    } catch (err) {
      if (!this.closed.signal.aborted) this.log.warn({ err }, 'recognizer names unavailable in time: listening without them');
      return [];
    }
  }

  private drainPending(u: Utterance, stream: TranscriptionStream): void {
    for (const pcm of u.pending) stream.append(pcm);
    u.pending = [];
    u.pendingSamples = 0;
  }

  /** End of speech → final transcript within STT_BUDGET_MS, or the SOS line. */
  private async transcribe(u: Utterance, stoppedAt: number): Promise<void> {
    let text: string;
    try {
      text = await withDeadline(
        async (signal) => {
          if (u.early?.failure !== undefined) throw u.early.failure;
          // Flushed early, and nothing said since: the segments are the transcript.
          if (u.early?.holding) {
            this.services.metrics.earlyFlushes.inc({ outcome: 'turn' });
            return '';
          }
          if (!this.stream) throw new Error('no transcription stream');
          const stream = await this.stream;
          this.drainPending(u, stream);
          return stream.flush(signal);
        },
        this.services.settings.sttBudgetMs,
        this.closed.signal,
      );
    } catch (err) {
      this.dropSpeculation(u);
      if (this.closed.signal.aborted) return;
      this.services.metrics.speechErrors.inc({ service: 'stt' });
      this.log.warn({ err }, 'no transcript in time: the SOS line is spoken');
      this.dropStream();
      this.speakUnheard(stoppedAt, err);
      // A late transcript is this utterance's bad luck; a service that failed is the kiosk's to know.
      if (!isLate(err) && this.attached) this.request.link.send({ type: 'error', code: 'speech_unavailable', message: 'the speech-to-text service failed: this utterance was not understood' });
      return;
    }
    const transcript = u.early ? u.early.text(text) : text.trim();
    // Adopted only by a turn on the very text it speculated on.
    const speculation = u.speculation?.transcript === transcript ? u.speculation : null;
    if (!speculation) this.dropSpeculation(u);
    if (this.closed.signal.aborted) return this.dropSpeculation(u);
    const playing = this.reply?.playing === true;
    if (transcript === '') {
      this.dropSpeculation(u);
      this.resumeFor(u);
      this.state(playing ? 'speaking' : 'listening');
      return;
    }
    if (endpointOutcome({ speechMs: u.lastSpeechMs, transcript, minMs: this.services.settings.bargeInMinMs, playing }) !== 'turn') {
      // « oui », « mmh », or too short while the reply plays: encouragement, not a turn.
      this.dropSpeculation(u);
      this.resumeFor(u);
      if (!u.resumed) this.services.metrics.bargeIn.inc({ outcome: 'backchannel_ignored' });
      this.state('speaking');
      return;
    }
    if (playing) this.services.metrics.bargeIn.inc({ outcome: 'interrupted' });
    const turnId = this.request.nextTurnId();
    const transcribedAt = performance.now();
    const endpointingMs = Math.round(stoppedAt - u.lastSpeechAt);
    const stages: VoiceStages = { turnId, endpointingMs, transcriptionMs: Math.round(transcribedAt - stoppedAt) };
    this.request.link.send({ type: 'transcript.final', turnId, text: transcript });
    this.beginTurn(turnId, transcript, stages, speculation, { speechStoppedAt: stoppedAt, transcribedAt, endpointingMs });
    u.speculation = null;
  }

  /** Drops the stream, open or still opening: an opening that resolves later is closed, not adopted. */
  private dropStream(): void {
    this.openStream?.close();
    this.openStream = null;
    this.stream = null;
  }

  /** Speech with no transcript: the pre-synthesized SOS line, spoken directly (no model, no turn in the window). */
  private speakUnheard(stoppedAt: number, err: unknown): void {
    const { session, link } = this.request;
    if (!this.attached) return;
    const turnId = this.request.nextTurnId();
    const startedAt = Date.now();
    this.cutReply();
    const text = session.actor.getSnapshot().context.cacheFlux.sosFallback();
    this.services.turns?.traces.untranscribed({ sessionId: session.sessionId, seniorId: session.seniorId, turnId }, stoppedAt, err);
    this.setTiming({ turnId, sentAt: performance.now(), stages: { turnId } });
    const reply = this.startReply(turnId);
    reply.finish(text);
    this.firstToken(turnId);
    link.send({ type: 'reply.done', turnId, text, flux: 'sos', latencyMs: Date.now() - startedAt, reason: 'transcription' });
    this.services.metrics.sosFallbacks.inc({ reason: 'transcription' });
  }

  // --- turns and replies ---

  typedTurn(turnId: string, transcript: string): void {
    this.beginTurn(turnId, transcript, { turnId });
  }

  /** `speculation`: the preemptive turn on this very transcript, whose work the turn adopts. */
  private beginTurn(turnId: string, transcript: string, stages: VoiceStages, speculation: PreemptiveTurn | null = null, voice?: VoiceTurnTiming): void {
    const { session } = this.request;
    if (session.actor.getSnapshot().status !== 'active') return speculation?.abort();
    this.cutReply();
    speculation?.commit();
    this.idle.heard();
    const timing: TurnTiming = { turnId, sentAt: performance.now(), stages };
    this.setTiming(timing);
    this.state('thinking', stages);
    const turns = this.services.turns;
    if (turns) turns.start(session, turnId, transcript, voice, (trace) => (timing.trace = trace));
    else session.actor.send({ type: 'TURN', turnId, transcript });
  }

  /** The next turn's timings; the previous one's speech span, still waiting for audio, ends without it. */
  private setTiming(timing: TurnTiming | null): void {
    this.timing?.speech?.setAttribute('kohami.speech.audio', false);
    this.timing?.speech?.end();
    this.timing = timing;
  }

  /** The current turn's reply audio; a reply of another turn replaces (and clears) the one before. */
  private replyFor(turnId: string): ReplyAudio | null {
    if (this.reply?.turnId === turnId) return this.reply.cancelled ? null : this.reply;
    this.cutReply();
    return this.startReply(turnId);
  }

  private startReply(turnId: string): ReplyAudio {
    const reply = new ReplyAudio({
      turnId,
      link: this.request.link,
      speaker: this.speaker,
      lines: (text) => this.lines.get(text),
      sampleRate: this.request.output.sampleRate,
      ...(this.request.output.encoding === 'opus' ? { opus: opusOf(this.services) } : {}),
      onFirstAudio: () => this.firstAudio(turnId),
      onSpeechError: (err) => {
        this.services.onSentenceLost();
        this.log.warn({ err }, 'a sentence could not be synthesized');
      },
    });
    this.reply = reply;
    this.idle.cancel();
    if (!this.request.aec) this.listener?.reset();
    void reply.sent.then(() => this.watchPlayback(reply));
    return reply;
  }

  private firstToken(turnId: string): void {
    const t = this.timing;
    if (t?.turnId !== turnId || t.stages.firstTokenMs !== undefined) return;
    t.stages = { ...t.stages, firstTokenMs: Math.round(performance.now() - t.sentAt) };
    if (t.trace && this.services.turns) t.speech = this.services.turns.traces.startUnder(t.trace, SPANS.speech);
  }

  private firstAudio(turnId: string): void {
    const t = this.timing;
    if (t?.turnId !== turnId) return this.state('speaking');
    t.stages = { ...t.stages, firstAudioMs: Math.round(performance.now() - t.sentAt) };
    const { stages } = t;
    if (t.speech) {
      t.speech.setAttributes({ 'kohami.speech.audio': true, 'kohami.first_audio_ms': stages.firstAudioMs! });
      t.speech.end();
      t.speech = undefined;
    }
    const observe = (stage: string, ms: number | undefined) => ms !== undefined && this.services.metrics.voiceStage.observe({ stage }, ms / 1000);
    observe('endpointing', stages.endpointingMs);
    observe('transcription', stages.transcriptionMs);
    observe('first_token', stages.firstTokenMs);
    observe('first_audio', stages.firstAudioMs);
    this.state('speaking', stages);
  }

  /** Once the audio is all sent, back to listening when the kiosk says it played it, or when it should have. */
  private watchPlayback(reply: ReplyAudio): void {
    if (this.playbackTimer) clearTimeout(this.playbackTimer);
    const check = () => {
      this.playbackTimer = null;
      if (this.reply !== reply || this.closed.signal.aborted) return;
      if (reply.playing) this.playbackTimer = setTimeout(check, 100).unref();
      else this.endOfPlayback();
    };
    check();
  }

  private endOfPlayback(): void {
    this.reply = null;
    this.pausedFor = null;
    if (!this.request.aec) this.listener?.reset();
    this.state(this.utterance ? 'user_speaking' : 'listening');
    if (!this.utterance) this.idle.replyEnded();
  }

  /** Words that are not a backchannel cut the reply; speech with no word by FALSE_INTERRUPTION_MS pauses it. */
  private considerBargeIn(): void {
    const u = this.utterance;
    const reply = this.reply;
    if (!u || !reply || !this.listener) return;
    const verdict = overReply({
      speechMs: this.listener.speechMs,
      sinceStartMs: u.sinceStartMs ?? 0,
      interim: u.interim,
      minMs: this.services.settings.bargeInMinMs,
      falseInterruptionMs: this.services.pacing.falseInterruptionMs,
      aec: this.request.aec,
      playing: reply.playing,
    });
    if (verdict === 'pause') {
      // A cough, the television, or words the recognizer has not given yet: the kiosk holds its place.
      if (reply.paused || reply.pause()) this.pausedFor = u;
      return;
    }
    if (verdict === 'play') {
      // Late words that are only a backchannel: the reply plays on at once.
      if (reply.paused) this.resumeFor(u);
      return;
    }
    this.services.metrics.bargeIn.inc({ outcome: 'interrupted' });
    this.cutReply();
    this.state('user_speaking');
  }

  /**
   * Stops the reply being spoken: the kiosk clears its audio, the model and speech requests are
   * aborted, and the actor keeps only what the senior heard. Returns whether audio had started.
   */
  private cutReply(playedMs?: number, tellActor = true): boolean {
    const reply = this.reply;
    if (!reply || reply.cancelled) return false;
    const heard = reply.heard(playedMs);
    reply.cancel();
    this.reply = null;
    this.pausedFor = null;
    if (reply.started) this.request.link.send({ type: 'reply.audio.clear', turnId: reply.turnId });
    if (tellActor) this.request.session.actor.send({ type: 'INTERRUPT', turnId: reply.turnId, heard });
    return reply.started;
  }

  /** The reply `u` paused plays on from where it stopped: its speech brought no word, or only a backchannel. */
  private resumeFor(u: Utterance): void {
    if (this.pausedFor !== u) return;
    this.pausedFor = null;
    if (!this.reply?.resume()) return;
    u.resumed = true;
    this.services.metrics.bargeIn.inc({ outcome: 'false_interruption' });
  }

  /**
   * The idle check-in: one pre-synthesized line under a voice turnId of its own, like the SOS line
   * for speech with no transcript — no model, and not a turn (the actor never hears of it, so the
   * conversation window does not hold it). Not while the senior speaks, a reply plays or the
   * microphone is muted.
   */
  private checkIn(): boolean {
    if (!this.attached || !this.voiceInput || this.muted || this.utterance || this.reply) return false;
    const snapshot = this.request.session.actor.getSnapshot();
    // A turn in flight (its reply not spoken yet) has the floor.
    if (snapshot.status !== 'active' || snapshot.context.current) return false;
    const turnId = this.request.nextTurnId();
    this.startReply(turnId).finish(CHECKIN_LINE);
    this.request.link.send({ type: 'reply.done', turnId, text: CHECKIN_LINE, flux: 'checkin', latencyMs: 0 });
    return true;
  }

  // --- kiosk frames ---

  interrupt(turnId: string, playedMs?: number): void {
    if (this.reply?.turnId === turnId && !this.reply.cancelled) {
      this.services.metrics.bargeIn.inc({ outcome: 'interrupted' });
      this.cutReply(playedMs);
      this.state('listening');
      return;
    }
    this.request.session.actor.send({ type: 'INTERRUPT', turnId });
  }

  playbackProgress(turnId: string, playedMs: number): void {
    if (this.reply?.turnId === turnId) this.reply.reportPlayed(playedMs);
  }

  playbackDone(turnId: string): void {
    if (this.reply?.turnId !== turnId) return;
    this.reply.playbackDone();
    if (!this.reply.playing) this.endOfPlayback();
  }

  mute(muted: boolean): void {
    this.muted = muted;
    if (!muted) return;
    this.listener?.reset();
    this.idle.cancel();
    if (this.utterance) {
      // Dropped: a reply its speech paused plays on.
      this.resumeFor(this.utterance);
      this.dropSpeculation(this.utterance);
      this.utterance = null;
      this.clearEndTimer();
      this.request.link.send({ type: 'vad', state: 'speech_stopped' });
    }
    this.state(this.reply?.playing ? 'speaking' : 'listening');
  }

  close(): void {
    if (this.closed.signal.aborted) return;
    // The kiosk goes (or the session ends) mid-reply: the window keeps what was heard.
    if (this.attached) this.cutReply();
    this.reply?.cancel();
    this.reply = null;
    this.setTiming(null);
    this.state('off');
    this.closed.abort();
    this.services.metrics.voiceSessions.dec();
    this.idle.cancel();
    this.gaps?.close();
    if (this.playbackTimer) clearTimeout(this.playbackTimer);
    this.clearEndTimer();
    if (this.utterance) this.dropSpeculation(this.utterance);
    this.savePauses();
    for (const off of this.unsubscribe) off();
    this.dropStream();
    this.listener?.close();
    this.listener = null;
    this.decoder?.close();
    this.lines.close();
  }

  /** The session's mid-sentence pauses go to the senior's profile (numbers only; the service re-checks the consent). */
  private savePauses(): void {
    const save = this.services.savePauses;
    if (!save || this.pauseProfile === null || this.heardPauses.length === 0) return;
    try {
      save(this.request.session.seniorId, this.heardPauses.splice(0));
    } catch (err) {
      this.log.warn({ err }, 'pause profile not saved');
    }
  }

  /** The actor's voice state (ops views, inspector): a handful of events per turn, never one per frame. */
  private state(state: VoiceActivity, stages?: VoiceStages): void {
    const { actor } = this.request.session;
    if (actor.getSnapshot().status !== 'active' || (!this.attached && state !== 'off')) return;
    actor.send({ type: 'VOICE.STATE', state, ...(stages ? { stages } : {}) });
  }
}

/** The negotiation offers Opus only when the codec is there (`VoiceSessionFactory.opus`). */
function opusOf(services: VoiceServices): OpusCodecPort {
  if (!services.opus) throw new Error('voice session: Opus negotiated without a codec');
  return services.opus;
}

/** No transcript within the budget (the service is slow), as opposed to a service that failed. */
function isLate(err: unknown): boolean {
  return err instanceof DeadlineError || err instanceof TranscriptionTimeoutError;
}

import type { Logger } from 'pino';
import { createActor, type Actor } from 'xstate';
import type { VoiceTurnTiming } from '../../adapters/telemetry/turn-traces.ts';
import type { VoiceActivity, VoiceStages } from '../../machines/session/session.types.ts';
import { turnTakingMachine, type EndedUtterance, type TurnTakingCommand } from '../../machines/voice/turn-taking.machine.ts';
import { CHECKIN_LINE } from './idle-checkin.ts';
import { Microphone } from './microphone.ts';
import type { PreemptiveTurn } from './preemption/preemptive-turn.ts';
import { SessionSpeculations } from './preemption/session-speculations.ts';
import { Replies } from './replies.ts';
import { Transcription } from './transcription.ts';
import type { VoiceServices, VoiceSessionFactory, VoiceSessionHandle, VoiceSessionRequest } from './voice-session.types.ts';

export function voiceSessionFactory(services: VoiceServices): VoiceSessionFactory {
  return { opus: services.opus !== undefined, create: (request) => new VoiceSession(services, request) };
}

/**
 * One kiosk's voice session, as wiring: microphone frames → the listener; its readings, the
 * recognizer's texts and the reply's edges → the turn-taking machine (machines/voice/turn-taking.machine.ts),
 * whose commands this carries out — end the utterance, flush, speculate, pause or cut the reply, hand
 * the actor its TURN. Audio and transcripts only pass through here, in RAM.
 */
class VoiceSession implements VoiceSessionHandle {
  private readonly closed = new AbortController();
  private readonly log: Logger;
  private readonly microphone: Microphone;
  private muted = false;
  private readonly turnTaking: Actor<typeof turnTakingMachine>;
  private readonly transcription: Transcription | null;
  private readonly replies: Replies;
  private readonly lines: ReturnType<VoiceServices['linesFor']>;
  private readonly speculations: SessionSpeculations | null;
  private readonly unsubscribe: Array<() => void> = [];
  /** When the speech whose final transcript the machine is answering stopped (performance.now()). */
  private stoppedAt = 0;

  private readonly services: VoiceServices;
  private readonly request: VoiceSessionRequest;

  constructor(services: VoiceServices, request: VoiceSessionRequest) {
    this.services = services;
    this.request = request;
    const { session } = request;
    const { settings, pacing, transcriber } = services;
    this.log = services.logger.child({ sessionId: session.sessionId, voice: true });
    this.microphone = new Microphone({
      services,
      request,
      log: this.log,
      signal: this.closed.signal,
      muted: () => this.muted,
      replyPlaying: () => this.replies.playing,
      events: {
        speechStarted: () => this.tell({ type: 'SPEECH.STARTED' }),
        audio: (pcm) => this.transcription?.append(pcm),
        speechStopped: () => this.tell({ type: 'SPEECH.STOPPED' }),
        speechResumed: (pauseMs) => this.tell({ type: 'SPEECH.RESUMED', pauseMs }),
        heard: (heard) => this.tell({ type: 'HEARD', heard }),
      },
    });
    this.lines = services.linesFor(session, request.output.sampleRate);
    const preemption = services.preemptiveTurns;
    this.speculations = preemption ? new SessionSpeculations({ preemption, actor: session.actor, speech: { speaker: services.speaker, lines: (line) => this.lines.get(line), opus: request.output.encoding === 'opus' }, log: this.log }) : null;
    this.turnTaking = createActor(turnTakingMachine, {
      input: {
        settings: { ...settings, ...pacing, idleCheckinMs: this.voiceInput ? pacing.idleCheckinMs : 0, aec: request.aec, preemption: preemption ? { leadMs: preemption.leadMs, maxPerUtterance: preemption.maxPerUtterance } : null },
        // Loaded with the senior's profile at session start, only while the `conversation` consent holds.
        profile: session.actor.getSnapshot().context.profile.pauses ?? null,
      },
      ...(services.inspect ? { inspect: services.inspect } : {}),
    });
    this.turnTaking.on('*', (command) => this.carryOut(command));
    this.replies = new Replies({
      request,
      speaker: preemption?.speakerFor(session.seniorId, services.speaker) ?? services.speaker,
      lines: (text) => this.lines.get(text),
      opus: services.opus,
      services,
      log: this.log,
      attached: () => this.attached,
      playing: () => this.tell({ type: 'REPLY.PLAYING' }),
      started: () => this.replyEdge({ type: 'REPLY.STARTED' }),
      ended: (played) => this.replyEdge({ type: 'REPLY.ENDED', played }),
      state: (state, stages) => this.state(state, stages),
    });
    this.transcription = transcriber
      ? new Transcription({
          transcriber,
          names: services.contextBias(session),
          settings: { ...settings, endOfTurnMaxMs: settings.endOfTurn.maxMs },
          signal: this.closed.signal,
          metrics: services.metrics,
          log: this.log,
          link: request.link,
          tell: (event) => this.tell(event),
          // The machine answers a final transcript at once (a turn or not): its speech's end is kept for the turn's timings.
          final: (utterance, transcript, stoppedAt) => {
            this.stoppedAt = stoppedAt;
            this.tell({ type: 'FINAL', utterance, transcript });
          },
          failed: (utterance, err, stoppedAt, late) => this.unheard(utterance, err, stoppedAt, late),
        })
      : null;
    // The session ended (or was replaced): its speech services go with it, whatever the socket does.
    const ended = session.actor.on('SessionClosed', () => this.close());
    this.unsubscribe.push(this.replies.follow(), () => ended.unsubscribe());
    this.turnTaking.start();
    this.state('listening');
    // Last: a constructor that threw has no close() to give the count back.
    services.metrics.voiceSessions.inc();
  }

  /** Off offline (no speech-to-text) and when the session's speech detectors failed to load. */
  get voiceInput(): boolean {
    return this.microphone.on;
  }

  private get attached(): boolean {
    return !this.closed.signal.aborted && this.request.session.link === this.request.link;
  }

  pushAudio(pcm: Int16Array): void {
    this.microphone.pushAudio(pcm);
  }

  pushPacket(packet: Uint8Array): string | null {
    return this.microphone.pushPacket(packet);
  }

  // --- the turn-taking machine ---

  private tell(event: Parameters<Actor<typeof turnTakingMachine>['send']>[0]): void {
    if (!this.closed.signal.aborted) this.turnTaking.send(event);
  }

  private replyEdge(event: { type: 'REPLY.STARTED' } | { type: 'REPLY.ENDED'; played: boolean }): void {
    // Half-duplex: what the microphone heard as a reply began or played out is not the senior (a cut leaves it).
    if (!this.request.aec && (event.type === 'REPLY.STARTED' || event.played)) this.microphone.reset();
    this.tell(event);
  }

  private carryOut(c: TurnTakingCommand): void {
    const { link } = this.request;
    const reply = this.replies.reply;
    switch (c.type) {
      case 'utterance.started':
        link.send({ type: 'vad', state: 'speech_started' });
        return this.transcription?.start(c.id);
      case 'utterance.ended':
        link.send({ type: 'vad', state: 'speech_stopped' });
        return this.transcription?.finish(c.utterance, performance.now());
      case 'utterance.dropped':
        link.send({ type: 'vad', state: 'speech_stopped' });
        return this.transcription?.forget();
      case 'end.at':
        return this.microphone.endpointAt(c.silenceMs);
      case 'flush':
        if (!this.transcription?.flush(c.utterance, c.first)) this.tell({ type: 'FLUSH.SKIPPED', utterance: c.utterance });
        return;
      case 'recheck':
        if (!this.transcription?.recheck(c.utterance)) this.tell({ type: 'FLUSH.SKIPPED', utterance: c.utterance });
        return;
      case 'segment.resumed':
        return this.transcription?.resume(c.utterance);
      case 'prefetch':
        // A warm-up only: the turn itself does the work if this failed.
        return this.guarded('turn prefetch failed', () => this.services.prefetchTurn?.(this.request.session.seniorId, c.text));
      case 'speculation.start':
        if (!this.speculations?.start(c.utterance, c.text)) this.tell({ type: 'SPECULATION.REFUSED', utterance: c.utterance });
        return;
      case 'speculation.drop':
        return this.speculations?.drop(c.utterance);
      case 'turn':
        return this.voiceTurn(c.utterance, c.transcript, c.adopt);
      case 'reply.pause':
        return void (reply?.paused || reply?.pause());
      case 'reply.resume':
        return void reply?.resume();
      case 'reply.cut':
        return this.replies.cut();
      case 'checkin':
        return this.checkIn();
      case 'activity':
        return this.state(c.state);
      case 'metric':
        if (c.name === 'barge_in') this.services.metrics.bargeIn.inc({ outcome: c.outcome });
        else this.services.metrics.earlyFlushes.inc({ outcome: c.outcome });
        return;
    }
  }

  private voiceTurn(u: EndedUtterance, transcript: string, adopt: boolean): void {
    const speculation = this.speculations?.take(u.id, adopt) ?? null;
    const { stoppedAt } = this;
    const turnId = this.request.nextTurnId();
    const transcribedAt = performance.now();
    const stages: VoiceStages = { turnId, endpointingMs: u.endpointingMs, transcriptionMs: Math.round(transcribedAt - stoppedAt) };
    this.request.link.send({ type: 'transcript.final', turnId, text: transcript });
    this.beginTurn(turnId, transcript, stages, speculation, { speechStoppedAt: stoppedAt, transcribedAt, endpointingMs: u.endpointingMs });
  }

  /** Speech with no transcript in time: the pre-synthesized SOS line, spoken directly (no model, no turn in the window). */
  private unheard(u: EndedUtterance, err: unknown, stoppedAt: number, late: boolean): void {
    this.tell({ type: 'TRANSCRIPTION.FAILED', utterance: u });
    if (!this.attached) return;
    this.replies.speakSos(this.request.nextTurnId(), stoppedAt, err);
    // A late transcript is this utterance's bad luck; a service that failed is the kiosk's to know.
    if (!late) this.request.link.send({ type: 'error', code: 'speech_unavailable', message: 'the speech-to-text service failed: this utterance was not understood' });
  }

  // --- turns and replies ---

  typedTurn(turnId: string, transcript: string): void {
    this.beginTurn(turnId, transcript, { turnId });
  }

  /** `speculation`: the preemptive turn on this very transcript, whose work the turn adopts. */
  private beginTurn(turnId: string, transcript: string, stages: VoiceStages, speculation: PreemptiveTurn | null = null, voice?: VoiceTurnTiming): void {
    const { session } = this.request;
    if (session.actor.getSnapshot().status !== 'active') return speculation?.abort();
    this.replies.cut();
    speculation?.commit();
    this.tell({ type: 'TYPED' });
    const timing = this.replies.turnSent(turnId, stages);
    this.state('thinking', stages);
    const turns = this.services.turns;
    if (turns) turns.start(session, turnId, transcript, voice, (trace) => (timing.trace = trace));
    else session.actor.send({ type: 'TURN', turnId, transcript });
  }

  /**
   * The idle check-in: one pre-synthesized line under a voice turnId of its own, like the SOS line —
   * no model, and not a turn. Not while the senior speaks, a reply plays or the microphone is muted.
   */
  private checkIn(): void {
    if (!this.attached || !this.voiceInput || this.muted || this.replies.reply) return;
    const snapshot = this.request.session.actor.getSnapshot();
    // A turn in flight (its reply not spoken yet) has the floor.
    if (snapshot.status !== 'active' || snapshot.context.current || this.turnTaking.getSnapshot().context.utterance) return;
    this.replies.speakCheckin(this.request.nextTurnId(), CHECKIN_LINE);
    this.tell({ type: 'CHECKIN.SPOKEN' });
  }

  // --- kiosk frames ---

  interrupt(turnId: string, playedMs?: number): void {
    if (this.replies.interrupt(turnId, playedMs)) this.state('listening');
    else this.request.session.actor.send({ type: 'INTERRUPT', turnId });
  }

  playbackProgress(turnId: string, playedMs: number): void {
    this.replies.playbackProgress(turnId, playedMs);
  }

  playbackDone(turnId: string): void {
    this.replies.playbackDone(turnId);
  }

  mute(muted: boolean): void {
    this.muted = muted;
    if (muted) this.microphone.reset();
    this.tell({ type: 'MUTE', muted });
  }

  close(): void {
    if (this.closed.signal.aborted) return;
    // The kiosk goes (or the session ends) mid-reply: the window keeps what was heard.
    if (this.attached) this.replies.cut();
    this.replies.close();
    this.state('off');
    const { heardPauses, profile } = this.turnTaking.getSnapshot().context;
    this.closed.abort();
    this.turnTaking.stop();
    this.services.metrics.voiceSessions.dec();
    this.speculations?.close();
    // The session's mid-sentence pauses go to the senior's profile (numbers only; the service re-checks the consent).
    if (profile !== null && heardPauses.length > 0) this.guarded('pause profile not saved', () => this.services.savePauses?.(this.request.session.seniorId, heardPauses));
    for (const off of this.unsubscribe) off();
    this.transcription?.drop();
    this.microphone.close();
    this.lines.close();
  }

  /** A side task that must not break the session (never given a text to log). */
  private guarded(failure: string, task: () => void): void {
    try {
      task();
    } catch (err) {
      this.log.warn({ err }, failure);
    }
  }

  /** The actor's voice state (ops views, inspector): a handful of events per turn, never one per frame. */
  private state(state: VoiceActivity, stages?: VoiceStages): void {
    const { actor } = this.request.session;
    if (actor.getSnapshot().status !== 'active' || (!this.attached && state !== 'off')) return;
    actor.send({ type: 'VOICE.STATE', state, ...(stages ? { stages } : {}) });
  }
}

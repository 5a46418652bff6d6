import type { Logger } from 'pino';
import { createActor, type Actor } from 'xstate';
import type { VoiceTurnTiming } from '../../adapters/telemetry/turn-traces.ts';
import type { VoiceActivity, VoiceStages } from '../../machines/session/session.types.ts';
import { END_OF_TURN_BACKSTOP_SLACK_MS, turnTakingMachine, type EndedUtterance, type TurnTakingCommand } from '../../machines/voice/turn-taking.machine.ts';
import type { OpusDecoderPort } from '../../machines/voice/voice.port.ts';
import { AudioGaps } from './audio-gaps.ts';
import { CHECKIN_LINE } from './idle-checkin.ts';
import type { PreemptiveTurn } from './preemption/preemptive-turn.ts';
import { Replies } from './replies.ts';
import { Transcription } from './transcription.ts';
import type { SessionListener, VoiceServices, VoiceSessionFactory, VoiceSessionHandle, VoiceSessionRequest } from './voice-session.types.ts';

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
  private listener: SessionListener | null = null;
  private readonly listenerReady: Promise<void>;
  private listenerFailed = false;
  private muted = false;
  private readonly turnTaking: Actor<typeof turnTakingMachine>;
  private readonly transcription: Transcription | null;
  private readonly replies: Replies;
  private readonly lines: ReturnType<VoiceServices['linesFor']>;
  /** The speculative turns under way, by utterance (an ended utterance's until its transcript is known). */
  private readonly speculations = new Map<number, PreemptiveTurn>();
  /** Opus input: the microphone stream's decoder (to 16 kHz), freed at close. */
  private readonly decoder: OpusDecoderPort | null;
  /** A gap in a gating kiosk's microphone audio reaches the listener as silence; null: the kiosk does not gate. */
  private readonly gaps: AudioGaps | null;
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
    this.decoder = request.input?.encoding === 'opus' ? opusOf(services).decoder() : null;
    this.gaps = request.gate ? new AudioGaps({ maxFillMs: settings.endOfTurn.maxMs + END_OF_TURN_BACKSTOP_SLACK_MS, fill: (pcm) => this.listen(pcm) }) : null;
    this.lines = services.linesFor(session, request.output.sampleRate);
    const preemption = services.preemptiveTurns;
    this.turnTaking = createActor(turnTakingMachine, {
      input: {
        settings: { ...settings, ...pacing, idleCheckinMs: this.voiceInput ? pacing.idleCheckinMs : 0, aec: request.aec, preemption: preemption ? { leadMs: preemption.leadMs, maxPerUtterance: preemption.maxPerUtterance } : null },
        // Loaded with the senior's profile at session start, only while the `conversation` consent holds.
        profile: session.actor.getSnapshot().context.profile.pauses ?? null,
      },
    });
    this.turnTaking.on('*', (command) => this.carryOut(command));
    this.replies = new Replies({
      session,
      link: request.link,
      output: request.output,
      speaker: preemption?.speakerFor(session.seniorId, services.speaker) ?? services.speaker,
      lines: (text) => this.lines.get(text),
      opus: services.opus,
      services,
      log: this.log,
      playing: () => this.tell({ type: 'REPLY.PLAYING' }),
      started: () => this.replyEdge({ type: 'REPLY.STARTED' }),
      ended: (played) => this.replyEdge({ type: 'REPLY.ENDED', played }),
      state: (state, stages) => this.state(state, stages),
    });
    const names = this.voiceInput ? services.contextBias(session) : Promise.resolve([]);
    // A failed read is reported where the names are awaited, when the stream opens.
    names.catch(() => undefined);
    this.transcription = transcriber
      ? new Transcription({
          transcriber,
          names,
          settings: { ...settings, endOfTurnMaxMs: settings.endOfTurn.maxMs },
          signal: this.closed.signal,
          metrics: services.metrics,
          log: this.log,
          interim: (text, utterance) => {
            request.link.send({ type: 'transcript.delta', text });
            if (utterance !== null) this.tell({ type: 'INTERIM', text });
          },
          flushed: (utterance, text) => this.tell({ type: 'FLUSHED', utterance, text }),
          flushFailed: (utterance) => this.tell({ type: 'FLUSH.FAILED', utterance }),
          final: (utterance, transcript, stoppedAt) => this.transcribed(utterance, transcript, stoppedAt),
          failed: (utterance, err, stoppedAt, late) => this.unheard(utterance, err, stoppedAt, late),
        })
      : null;
    this.listenerReady = this.voiceInput
      ? services.createListener({
          speechStarted: () => this.tell({ type: 'SPEECH.STARTED' }),
          audio: (pcm) => this.transcription?.append(pcm),
          speechStopped: () => this.tell({ type: 'SPEECH.STOPPED' }),
          speechResumed: (pauseMs) => this.tell({ type: 'SPEECH.RESUMED', pauseMs }),
          heard: (heard) => this.tell({ type: 'HEARD', heard }),
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
      this.replies.firstToken(e.turnId);
      this.replies.replyFor(e.turnId)?.delta(e.text);
    });
    const done = session.actor.on('reply.done', (e) => {
      if (!this.attached) return;
      // A reply with no delta (a pre-synthesized line) has its first text here.
      this.replies.firstToken(e.turnId);
      if (!e.interrupted) return this.replies.replyFor(e.turnId)?.finish(e.text);
      // Cut by something else than this session (a lost socket, a close): its audio stops too.
      if (this.replies.reply?.turnId === e.turnId) this.replies.cut(undefined, false);
    });
    // The session ended (or was replaced): its speech services go with it, whatever the socket does.
    const ended = session.actor.on('SessionClosed', () => this.close());
    this.unsubscribe.push(() => delta.unsubscribe(), () => done.unsubscribe(), () => ended.unsubscribe());
    this.turnTaking.start();
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

  private listen(pcm: Int16Array): void {
    if (!this.voiceInput || this.muted || this.closed.signal.aborted) return;
    // Half-duplex kiosk (no echo cancellation): the microphone hears the reply, so it is not listened to.
    if (!this.request.aec && this.replies.playing) return;
    if (this.listener) return void this.listener.push(pcm).catch(this.pushFailed);
    if (!this.listenerFailed) void this.listenerReady.then(() => this.listener?.push(pcm).catch(this.pushFailed));
  }

  // Bound once: the microphone path runs 50 times a second per session and creates no closure per frame.
  private readonly pushFailed = (err: unknown): void => this.log.warn({ err }, 'voice detector failed on a window');

  // --- the turn-taking machine ---

  private tell(event: Parameters<Actor<typeof turnTakingMachine>['send']>[0]): void {
    if (!this.closed.signal.aborted) this.turnTaking.send(event);
  }

  private replyEdge(event: { type: 'REPLY.STARTED' } | { type: 'REPLY.ENDED'; played: boolean }): void {
    // Half-duplex: what the microphone heard of the reply is not the senior.
    if (!this.request.aec) this.listener?.reset();
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
        return this.listener?.endpointAt(c.silenceMs);
      case 'flush':
        if (!this.transcription?.flush(c.utterance, c.first)) this.tell({ type: 'FLUSH.SKIPPED', utterance: c.utterance });
        return;
      case 'recheck':
        if (!this.transcription?.recheck(c.utterance)) this.tell({ type: 'FLUSH.SKIPPED', utterance: c.utterance });
        return;
      case 'segment.resumed':
        return this.transcription?.resume(c.utterance);
      case 'prefetch':
        return this.prefetch(c.text);
      case 'speculation.start':
        return this.speculate(c.utterance, c.text);
      case 'speculation.drop':
        this.speculations.get(c.utterance)?.abort();
        this.speculations.delete(c.utterance);
        return;
      case 'turn':
        return this.voiceTurn(c.utterance, c.transcript, c.adopt);
      case 'reply.pause':
        return void (reply && !reply.paused && reply.pause());
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

  /** While endpointing waits, the turn's work may start on the interim transcript. */
  private prefetch(text: string): void {
    try {
      this.services.prefetchTurn?.(this.request.session.seniorId, text);
    } catch (err) {
      // A warm-up only: the turn itself does the work if this failed. The text is never logged.
      this.log.warn({ err }, 'turn prefetch failed');
    }
  }

  /** The preemptive turn; CacheFlux's instant answers and a session busy with a reply are left to the real turn. */
  private speculate(utterance: number, text: string): void {
    const preemption = this.services.preemptiveTurns!;
    let speculation: PreemptiveTurn | null = null;
    try {
      if (!preemption.answersAtOnce(text)) speculation = preemption.start(this.request.session.actor, text, { speaker: this.services.speaker, lines: (line) => this.lines.get(line), opus: this.request.output.encoding === 'opus' });
    } catch (err) {
      // A head start only: the turn does its own work. The text is never logged.
      this.log.warn({ err }, 'preemptive turn failed to start');
    }
    if (speculation) this.speculations.set(utterance, speculation);
    else this.tell({ type: 'SPECULATION.REFUSED', utterance });
  }

  /** The machine answers a final transcript at once (a turn or not): its speech's end is kept for the turn's timings. */
  private transcribed(utterance: EndedUtterance, transcript: string, stoppedAt: number): void {
    this.stoppedAt = stoppedAt;
    this.tell({ type: 'FINAL', utterance, transcript });
  }

  private voiceTurn(u: EndedUtterance, transcript: string, adopt: boolean): void {
    const speculation = adopt ? (this.speculations.get(u.id) ?? null) : null;
    if (!adopt) this.speculations.get(u.id)?.abort();
    this.speculations.delete(u.id);
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
    this.services.metrics.speechErrors.inc({ service: 'stt' });
    this.log.warn({ err }, 'no transcript in time: the SOS line is spoken');
    const { session, link } = this.request;
    if (!this.attached) return;
    const turnId = this.request.nextTurnId();
    const startedAt = Date.now();
    this.replies.cut();
    const text = session.actor.getSnapshot().context.cacheFlux.sosFallback();
    this.services.turns?.traces.untranscribed({ sessionId: session.sessionId, seniorId: session.seniorId, turnId }, stoppedAt, err);
    this.replies.turnSent(turnId, { turnId });
    this.replies.speakLine(turnId, text);
    link.send({ type: 'reply.done', turnId, text, flux: 'sos', latencyMs: Date.now() - startedAt, reason: 'transcription' });
    this.services.metrics.sosFallbacks.inc({ reason: 'transcription' });
    // A late transcript is this utterance's bad luck; a service that failed is the kiosk's to know.
    if (!late) link.send({ type: 'error', code: 'speech_unavailable', message: 'the speech-to-text service failed: this utterance was not understood' });
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
    const turnId = this.request.nextTurnId();
    this.replies.speakLine(turnId, CHECKIN_LINE);
    this.request.link.send({ type: 'reply.done', turnId, text: CHECKIN_LINE, flux: 'checkin', latencyMs: 0 });
    this.tell({ type: 'CHECKIN.SPOKEN' });
  }

  // --- kiosk frames ---

  interrupt(turnId: string, playedMs?: number): void {
    const reply = this.replies.reply;
    if (reply?.turnId !== turnId || reply.cancelled) return void this.request.session.actor.send({ type: 'INTERRUPT', turnId });
    this.services.metrics.bargeIn.inc({ outcome: 'interrupted' });
    this.replies.cut(playedMs);
    this.state('listening');
  }

  playbackProgress(turnId: string, playedMs: number): void {
    if (this.replies.reply?.turnId === turnId) this.replies.reply.reportPlayed(playedMs);
  }

  playbackDone(turnId: string): void {
    this.replies.playbackDone(turnId);
  }

  mute(muted: boolean): void {
    this.muted = muted;
    if (muted) this.listener?.reset();
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
    this.gaps?.close();
    for (const speculation of this.speculations.values()) speculation.abort();
    this.speculations.clear();
    if (profile !== null && heardPauses.length > 0) this.savePauses(heardPauses);
    for (const off of this.unsubscribe) off();
    this.transcription?.drop();
    this.listener?.close();
    this.listener = null;
    this.decoder?.close();
    this.lines.close();
  }

  /** The session's mid-sentence pauses go to the senior's profile (numbers only; the service re-checks the consent). */
  private savePauses(pauses: number[]): void {
    try {
      this.services.savePauses?.(this.request.session.seniorId, pauses);
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
function opusOf(services: VoiceServices): NonNullable<VoiceServices['opus']> {
  if (!services.opus) throw new Error('voice session: Opus negotiated without a codec');
  return services.opus;
}

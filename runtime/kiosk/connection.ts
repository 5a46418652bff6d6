import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { SeniorErasedError } from '../../adapters/postgres/pg-presence.repository.ts';
import {
  SessionStartError,
  ShuttingDownError,
  StartSupersededError,
  type LiveSession,
  type SessionRegistry,
} from '../sessions/session-registry.ts';
import type { VoiceLink } from '../voice/voice-link.ts';
import type { VoiceSessionFactory, VoiceSessionHandle } from '../voice/voice-session.types.ts';
import {
  droppedTurnId,
  micFrameProblem,
  negotiateAudio,
  parseClientFrame,
  SERVICE_RESTART,
  VOICE_FRAME_TYPES,
  type ClientFrame,
  type Negotiation,
} from '../protocol/messages.ts';
import type { ErrorCode, ServerFrame } from '../protocol/server-frames.ts';
import type { RecentTurnIds } from './recent-turn-ids.ts';
import type { SeniorLimits } from './senior-limits.ts';
import { audioByteBudget, TokenBucket } from './token-bucket.ts';
import { opusPacketInfo } from '../../machines/voice/opus-packet.ts';
import { INPUT_SAMPLE_RATE } from '../../machines/voice/voice.port.ts';

/**
 * A kiosk with this much unsent data is not reading: its dropped turns are no longer answered one by
 * one (each answer would grow the buffer), only by the once-a-second notice.
 */
const UNREAD_BYTES_LIMIT = 256 * 1024;

/** What the gateway's connections share. */
export interface KioskConnectionContext {
  registry: SessionRegistry;
  /** Text frames per second per socket, and the burst allowed above it. */
  rateLimit: { perSecond: number; burst: number };
  voice: VoiceSessionFactory | undefined;
  /** Per-senior bounds shared by every socket of the senior (its start bucket). */
  limits: SeniorLimits;
  /** Kept by the session, not the socket: a resume on a new socket keeps what the session has seen. */
  seenTurnsOf(session: LiveSession): RecentTurnIds;
}

type FrameOf<T extends ClientFrame['type']> = Extract<ClientFrame, { type: T }>;
type NegotiatedAudio = Extract<Negotiation, { ok: true }>;

/** A voice session's audio pipeline on this socket, and the microphone's own byte budget. */
interface SocketVoice {
  handle: VoiceSessionHandle;
  audioBudget: TokenBucket;
  /** The microphone sends Opus packets, not PCM. */
  opus: boolean;
}

/** An Opus packet spends the budget of the PCM it decodes to: the budget stays 1.5× real time. */
const PCM_BYTES_PER_MS = (INPUT_SAMPLE_RATE * 2) / 1000;

/** One kiosk socket: its session, its budgets, and what each frame it sends does (docs/protocol.md). */
export class KioskConnection {
  /** The socket as the session and its voice pipeline see it; the registry knows the socket by it. */
  readonly link: VoiceLink;
  private readonly frameBudget: TokenBucket;
  // On the monotonic clock: a wall clock stepping back must not silence the notices.
  private readonly noticedAt = new Map<ErrorCode, number>();
  private session: LiveSession | null = null;
  private voice: SocketVoice | null = null;
  /** The socket has closed: a start still waiting on the database finds its kiosk gone. */
  private gone = false;

  private readonly socket: WebSocket;
  private readonly seniorId: string;
  private readonly log: FastifyBaseLogger;
  private readonly context: KioskConnectionContext;

  constructor(
    socket: WebSocket,
    seniorId: string,
    log: FastifyBaseLogger,
    context: KioskConnectionContext,
  ) {
    this.socket = socket;
    this.seniorId = seniorId;
    this.log = log;
    this.context = context;
    this.frameBudget = new TokenBucket(context.rateLimit.perSecond, context.rateLimit.burst);
    this.link = {
      send: (frame) => this.send(frame),
      sendAudio: (bytes) => {
        if (socket.readyState === socket.OPEN) socket.send(bytes, { binary: true });
      },
      get unreadBytes() {
        return socket.readyState === socket.OPEN ? socket.bufferedAmount : Infinity;
      },
    };
    socket.on('close', () => this.onClose());
    socket.on('error', (err) => log.warn({ err, seniorId }, 'kiosk socket error'));
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    // Microphone audio has its own byte budget: the text-frame limit never drops it, nor it text.
    if (isBinary && this.voice && this.session?.link === this.link) {
      this.onMicrophone(this.voice, bytesOf(data));
      return;
    }
    if (!this.frameBudget.take()) {
      this.refuseFlooded(data, isBinary);
      return;
    }
    if (isBinary) {
      // Before any session.start, audio is early; in a text session, binary frames keep their error.
      if (!this.session) this.send({ type: 'error', code: 'audio_not_negotiated', message: 'audio before negotiation: send session.start with mode "voice" first' });
      else this.send({ type: 'error', code: 'binary_not_supported', message: 'frames must be JSON text (binary audio frames need a voice session: session.start with mode "voice")' });
      return;
    }
    const parsed = parseClientFrame(data.toString());
    if (parsed.ok) this.onFrame(parsed.frame);
    else this.send({ type: 'error', code: parsed.code, message: parsed.message, ...(parsed.turnId !== undefined ? { turnId: parsed.turnId } : {}) });
  }

  private onMicrophone(voice: SocketVoice, bytes: Buffer): void {
    if (voice.opus) return this.onOpusPacket(voice, bytes);
    // Checked before the budget: a refused frame spends none of it.
    const problem = micFrameProblem(bytes.length);
    if (problem !== null) this.notice('invalid_frame', problem);
    else if (!voice.audioBudget.take(bytes.length)) this.notice('audio_rate_limited', 'microphone audio over 1.5× real time: frame dropped');
    else if (!voice.handle.voiceInput) this.notice('speech_unavailable', SPEECH_UNAVAILABLE);
    else voice.handle.pushAudio(pcmView(bytes));
  }

  /** Read before decoding (the packet's own header): a malformed or oversized one costs no codec time nor budget. */
  private onOpusPacket(voice: SocketVoice, bytes: Buffer): void {
    const info = opusPacketInfo(bytes);
    if (!info.ok) return this.notice('invalid_frame', `a microphone frame is one Opus packet of 10–60 ms; got ${info.problem} (frame dropped)`);
    if (!voice.audioBudget.take(info.durationMs * PCM_BYTES_PER_MS)) return this.notice('audio_rate_limited', 'microphone audio over 1.5× real time: frame dropped');
    if (!voice.handle.voiceInput) return this.notice('speech_unavailable', SPEECH_UNAVAILABLE);
    const problem = voice.handle.pushPacket(bytes);
    if (problem !== null) this.notice('invalid_frame', problem);
  }

  private refuseFlooded(data: RawData, isBinary: boolean): void {
    const { perSecond } = this.context.rateLimit;
    // A dropped turn is the senior's words lost: the kiosk is told which one, to send it again.
    const turnId = isBinary || this.socket.bufferedAmount > UNREAD_BYTES_LIMIT ? undefined : droppedTurnId(data.toString());
    if (turnId !== undefined) this.send({ type: 'error', code: 'rate_limited', turnId, message: `turn dropped: more than ${perSecond} frames per second; send it again` });
    else this.notice('rate_limited', `too many frames: at most ${perSecond} per second; frame dropped`);
  }

  private onFrame(frame: ClientFrame): void {
    switch (frame.type) {
      case 'ping':
        this.send({ type: 'pong' });
        return;
      case 'session.start':
        this.start(frame);
        return;
    }
    const session = this.session;
    if (!session || session.link !== this.link || session.actor.getSnapshot().status !== 'active') {
      this.send({ type: 'error', code: 'no_session', message: 'no live session on this socket: send session.start first', ...('turnId' in frame ? { turnId: frame.turnId } : {}) });
      return;
    }
    if (VOICE_FRAME_TYPES.has(frame.type) && !this.voice) {
      this.send({ type: 'error', code: 'audio_not_negotiated', message: `${frame.type} needs a voice session: session.start with mode "voice"` });
      return;
    }
    switch (frame.type) {
      case 'turn':
        this.turn(session, frame);
        return;
      case 'interrupt':
        this.interrupt(session, frame);
        return;
      case 'session.end':
        this.end(session);
        return;
      default:
        this.onVoiceFrame(frame);
    }
  }

  private start(frame: FrameOf<'session.start'>): void {
    // Checked first: a refused start changes nothing (the session on this socket, if any, lives on).
    const admission = this.context.limits.takeStart(this.seniorId);
    if (!admission.ok) {
      if (this.socket.bufferedAmount > UNREAD_BYTES_LIMIT) return;
      const { startsPerMinute, startsBurst } = this.context.limits.settings;
      this.send({
        type: 'error',
        code: 'start_rate_limited',
        retryAfterMs: admission.retryAfterMs,
        message: `session.start refused: this senior's kiosks may start at most ${startsBurst} sessions at once, then ${startsPerMinute} a minute; nothing changed, send it again in ${admission.retryAfterMs} ms`,
      });
      return;
    }
    let audio: NegotiatedAudio | null = null;
    if (frame.mode === 'voice') {
      const negotiated = negotiateAudio(frame.audio, { opus: this.context.voice?.opus === true });
      if (!negotiated.ok) {
        this.send({ type: 'error', code: 'unsupported_audio_format', message: negotiated.message });
        return;
      }
      if (!this.context.voice) {
        this.send({ type: 'error', code: 'speech_unavailable', message: 'this runtime has no voice mode' });
        return;
      }
      audio = negotiated;
    }
    this.context.registry
      .start(this.seniorId, this.link, frame.resume === true)
      .then(({ session, resumed }) => this.onStarted(session, resumed, audio))
      .catch((err: unknown) => this.onStartFailed(err));
  }

  private onStarted(started: LiveSession, resumed: boolean, audio: NegotiatedAudio | null): void {
    // Closed between its spawn and this answer (an erasure's fence): its kiosk has heard why, and no session.ready follows.
    if (started.actor.getSnapshot().status !== 'active') return;
    if (this.session && this.session !== started) this.context.registry.detach(this.session, this.link);
    this.session = started;
    this.endVoice();
    // The socket closed while the start waited on the database: the session loses its kiosk now, as if
    // the socket had dropped at this moment, and waits out the grace period for a resume.
    if (this.gone) {
      this.context.registry.detach(started, this.link);
      return;
    }
    const ready = { type: 'session.ready', sessionId: started.sessionId, seniorId: this.seniorId, resumed } as const;
    if (!audio || !this.context.voice) {
      this.send(ready);
      return;
    }
    const { input, output, aec, gate } = audio;
    const turns = this.context.seenTurnsOf(started);
    const handle = this.context.voice.create({ session: started, link: this.link, input, output, aec, gate, nextTurnId: () => turns.nextVoiceTurnId() });
    // The budget is counted in 16 kHz PCM bytes whatever the encoding (an Opus packet by its duration).
    this.voice = { handle, audioBudget: audioByteBudget(INPUT_SAMPLE_RATE), opus: input.encoding === 'opus' };
    // The offer: a kiosk that declared its speech gate (audio.kiosk.gate) has its gaps filled with silence (runtime/voice/audio-gaps.ts).
    this.send({ ...ready, mode: 'voice', audio: { input, output, aec, voiceInput: handle.voiceInput, gaps: true } });
  }

  private onStartFailed(err: unknown): void {
    if (err instanceof ShuttingDownError) {
      // Expected during a deploy, not a failure.
      this.log.info({ seniorId: this.seniorId }, 'session start refused: shutting down');
      this.send({ type: 'session.closed', reason: 'shutdown' });
      return;
    }
    if (err instanceof StartSupersededError) {
      // Another socket of this senior asked later while this start waited: it has the session.
      this.send({ type: 'session.closed', reason: 'replaced' });
      return;
    }
    if (err instanceof SeniorErasedError) {
      // Refused at whatever step the start was: the senior is being erased, or was. Not a failure.
      this.log.info({ seniorId: this.seniorId }, 'session start refused: senior erased');
      this.send({ type: 'session.closed', reason: 'erased' });
      return;
    }
    // Enough for an operator to act (which step, what kind of failure), never a message: a driver's
    // or provider's message may quote values.
    const step = err instanceof SessionStartError ? err.step : 'spawn';
    this.log.error({ seniorId: this.seniorId, step, failure: failureOf(err instanceof SessionStartError ? err.cause : err) }, 'session start failed');
    this.socket.close(1011, 'session start failed');
  }

  private turn(session: LiveSession, frame: FrameOf<'turn'>): void {
    if (!this.context.seenTurnsOf(session).admit(frame.turnId)) {
      this.send({ type: 'error', code: 'duplicate_turn', turnId: frame.turnId, message: `turnId ${JSON.stringify(frame.turnId)} was already used in this session; the turn is not answered again` });
      return;
    }
    // In voice mode a typed turn also cuts the reply audio playing, and is answered with speech.
    if (this.voice) this.voice.handle.typedTurn(frame.turnId, frame.transcript);
    else this.context.registry.turn(session, frame.turnId, frame.transcript);
  }

  private interrupt(session: LiveSession, frame: FrameOf<'interrupt'>): void {
    if (this.voice) this.voice.handle.interrupt(frame.turnId, frame.playedMs);
    else session.actor.send({ type: 'INTERRUPT', turnId: frame.turnId });
  }

  private onVoiceFrame(frame: FrameOf<'playback.progress' | 'playback.done' | 'mic'>): void {
    switch (frame.type) {
      case 'playback.progress':
        this.voice?.handle.playbackProgress(frame.turnId, frame.playedMs);
        return;
      case 'playback.done':
        this.voice?.handle.playbackDone(frame.turnId);
        return;
      case 'mic':
        this.voice?.handle.mute(frame.muted);
    }
  }

  private end(session: LiveSession): void {
    this.endVoice();
    session.actor.send({ type: 'CLOSE', reason: 'ended' });
  }

  private send(frame: ServerFrame): void {
    // The session is over on this socket (ended, or taken over by another socket): its voice session
    // goes now, as at a socket close, even if the kiosk keeps this socket open.
    if (frame.type === 'session.closed') this.endVoice();
    if (this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(JSON.stringify(frame));
    // This process is going away and takes no session any more: the kiosk reconnects, elsewhere.
    if (frame.type === 'session.closed' && frame.reason === 'shutdown') this.socket.close(SERVICE_RESTART, 'service restart');
  }

  /** At most one notice a second per code: answering every flooded frame would amplify the flood. */
  private notice(code: ErrorCode, message: string): void {
    const t = performance.now();
    if (t - (this.noticedAt.get(code) ?? -Infinity) < 1000) return;
    this.noticedAt.set(code, t);
    this.send({ type: 'error', code, message });
  }

  private onClose(): void {
    this.gone = true;
    this.endVoice();
    if (this.session) this.context.registry.detach(this.session, this.link);
  }

  private endVoice(): void {
    this.voice?.handle.close();
    this.voice = null;
  }
}

/** Messages of the pg driver and pool that are fixed strings (no value in them), kept as they are. */
const KNOWN_DRIVER_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Query read timeout',
]);

/**
 * What failed, for the log: the error's class, its code (a Node or driver code), a database error's
 * SQLSTATE and where in Postgres it was raised, and the message only when it is one of the driver's
 * fixed ones (a pool timeout) — never free text, which may quote values.
 */
export function failureOf(err: unknown): Record<string, string> {
  if (!(err instanceof Error)) return { class: typeof err };
  const e = err as Error & { code?: unknown; severity?: unknown; routine?: unknown };
  const failure: Record<string, string> = { class: e.constructor?.name || e.name };
  const code = typeof e.code === 'string' ? e.code : undefined;
  // pg's DatabaseError carries the SQLSTATE as `code`, with a severity.
  if (code && typeof e.severity === 'string') {
    failure.sqlstate = code;
    failure.severity = e.severity;
    if (typeof e.routine === 'string') failure.routine = e.routine;
  } else if (code) failure.code = code;
  if (KNOWN_DRIVER_MESSAGES.has(e.message)) failure.message = e.message;
  return failure;
}

const SPEECH_UNAVAILABLE = 'voice input is unavailable for this session (no speech-to-text service, or speech detection failed to start): send typed turns';

function bytesOf(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? Buffer.from(data) : data;
}

/**
 * The frame's samples as s16, viewed in place (no copy, no garbage per frame) when the bytes sit at an
 * even offset, which is how ws hands a whole frame; copied only at an odd offset of a pooled buffer.
 * ws never reuses a message's memory, and the listener copies what it keeps.
 */
function pcmView(bytes: Buffer): Int16Array {
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  const pcm = new Int16Array(bytes.length / 2);
  new Uint8Array(pcm.buffer).set(bytes);
  return pcm;
}

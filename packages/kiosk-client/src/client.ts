import { decodeAudioFrame, type AudioFrame } from './audio-frame.ts';
import { backoffDelayMs, backoffOptions, type BackoffOptions } from './backoff.ts';
import { Emitter } from './emitter.ts';
import { KioskError } from './errors.ts';
import { parseServerFrame } from './parse-frame.ts';
import type { ClientFrame, CloseReason, ErrorFrame, ReplyDoneFrame, ServerFrame, ServerFrameType, SessionReadyFrame, VoiceAudioRequest } from './protocol.ts';
import { OPEN, queryTokenSocket, type SocketFactory, type SocketLike } from './socket.ts';
import { transcriptProblem, TurnIds } from './turns.ts';

/** Default bounds, in ms (each overridable in `KioskClientOptions`). */
export const DEFAULT_BOUNDS = {
  /** The WebSocket handshake: a host that takes the TCP connection and says nothing. */
  connectTimeoutMs: 10_000,
  /** `session.ready` after `session.start` (the runtime answers within milliseconds). */
  readyTimeoutMs: 10_000,
  /** A turn's `reply.done`: the runtime ends every turn within `REPLY_MAX_MS` (15 s) plus its SOS line. */
  replyTimeoutMs: 30_000,
  /** `pong` after `ping`. */
  pingTimeoutMs: 5_000,
  /** `session.closed` after `session.end`. */
  endTimeoutMs: 5_000,
} as const;

/** The server answered the upgrade with HTTP `status` instead of opening the socket. */
const refusal = (status: number): KioskError => new KioskError('refused', `refused: HTTP ${status}`, { status });

/** A turn refused by the flood limit is sent again this much later, same turnId (docs/protocol.md). */
const RATE_LIMITED_RETRY_MS = 1_000;
/** Typed turns waiting for their reply at once (a senior says one thing at a time; a loop that spams turns is refused). */
export const MAX_PENDING_TURNS = 32;
/** Cleared turns remembered, to drop their late audio frames. */
const CLEARED_TURNS_KEPT = 64;

export type StartOptions = { mode?: 'text'; resume?: boolean } | { mode: 'voice'; audio: VoiceAudioRequest; resume?: boolean };

export interface KioskClientOptions extends Partial<Record<keyof typeof DEFAULT_BOUNDS, number>> {
  /** `ws://host:port/v1/kiosk` */
  url: string;
  /** The device token. */
  token: string;
  /** How the socket is opened (default `queryTokenSocket`; in Node `headerSocket` or `wsSocket` from `./node`). */
  socket?: SocketFactory;
  /** Resume after a lost socket or a runtime shutdown: the back-off (DEFAULT_BACKOFF: for as long as it takes), or `false` not to. */
  reconnect?: Partial<BackoffOptions> | false;
  /** The jitter's source, in [0, 1) (tests pin it). */
  random?: () => number;
  /** Prefix of the turnIds `turn()` makes (default: random, so that two clients of one session never collide). */
  turnIdPrefix?: string;
}

export type ClientState = 'idle' | 'connecting' | 'starting' | 'ready' | 'reconnecting' | 'closed';

/** Why the client is closed for good: the session's close reason, `client` (close() was called) or `lost` (no resume). */
export interface ClosedEvent {
  reason: CloseReason | 'client' | 'lost';
  error?: KioskError;
}

type FrameEvents = { [K in ServerFrameType]: Extract<ServerFrame, { type: K }> };

/** Every server frame under its `type`, the decoded reply audio, and the client's own events (`client.*`). */
export interface KioskClientEvents extends FrameEvents {
  /** A reply-audio binary frame (frames of a cleared turn are dropped). */
  audio: AudioFrame;
  'client.state': ClientState;
  'client.error': KioskError;
  'client.reconnecting': { attempt: number; delayMs: number };
  'client.closed': ClosedEvent;
}

interface PendingTurn {
  transcript: string;
  resolve: (done: ReplyDoneFrame) => void;
  reject: (err: KioskError) => void;
  timer: ReturnType<typeof setTimeout>;
  /** Sent again on a resumed socket: a duplicate_turn then means its answer went to the lost one. */
  resent: boolean;
  retry?: ReturnType<typeof setTimeout>;
}

interface Attach {
  resolve: (ready: SessionReadyFrame) => void;
  reject: (err: KioskError) => void;
  timer: ReturnType<typeof setTimeout>;
  opened: boolean;
}

const noop = (): void => {};
const randomPrefix = (random: () => number): string => `t${Math.floor(random() * 36 ** 4).toString(36).padStart(4, '0')}-`;

/**
 * A kiosk's connection to the runtime (docs/protocol.md): opens the socket and the session with
 * bounded waits, resumes a lost one with jittered back-off, hands every server frame to its listeners
 * by type, and answers each text turn with its one `reply.done`. Nothing the runtime sends throws:
 * a bad frame is a `client.error` event and is dropped.
 */
export class KioskClient {
  private readonly url: string;
  private readonly token: string;
  private readonly factory: SocketFactory;
  private readonly bounds: Record<keyof typeof DEFAULT_BOUNDS, number>;
  private readonly backoff: Required<BackoffOptions> | null;
  private readonly random: () => number;
  private readonly events = new Emitter<KioskClientEvents>((err, event) => {
    if (event !== 'client.error') this.events.emit('client.error', new KioskError('listener_failed', `a "${String(event)}" listener threw: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
  });
  private readonly turnIds: TurnIds;
  private readonly pending = new Map<string, PendingTurn>();
  private readonly cleared = new Set<string>();
  private readonly pongs: Array<() => void> = [];

  private socket: SocketLike | null = null;
  private attach: Attach | null = null;
  private startFrame: ClientFrame | null = null;
  private sessionReady: SessionReadyFrame | null = null;
  private closedReason: CloseReason | null = null;
  private currentState: ClientState = 'idle';
  private userClosed = false;
  private retryWait: { timer: ReturnType<typeof setTimeout>; resolve: () => void } | null = null;
  private muted: boolean | null = null;
  /** The turn whose reply is streaming or playing: what `interrupt()` stops by default. */
  private replyTurn: string | null = null;

  constructor(options: KioskClientOptions) {
    this.url = options.url;
    this.token = options.token;
    this.factory = options.socket ?? queryTokenSocket;
    this.bounds = { ...DEFAULT_BOUNDS };
    for (const key of Object.keys(DEFAULT_BOUNDS) as Array<keyof typeof DEFAULT_BOUNDS>) {
      const value = options[key];
      if (value === undefined) continue;
      if (!(value > 0)) throw new KioskError('invalid_argument', `${key} must be a number of milliseconds above 0, got ${value}`);
      this.bounds[key] = value;
    }
    const backoff = options.reconnect === false ? null : backoffOptions(options.reconnect ?? {});
    if (typeof backoff === 'string') throw new KioskError('invalid_argument', backoff);
    this.backoff = backoff;
    this.random = options.random ?? Math.random;
    this.turnIds = new TurnIds(options.turnIdPrefix ?? randomPrefix(this.random));
  }

  get state(): ClientState {
    return this.currentState;
  }

  /** The live session's `session.ready` (the latest, after a resume), or null. */
  get session(): SessionReadyFrame | null {
    return this.sessionReady;
  }

  on<E extends keyof KioskClientEvents & string>(event: E, listener: (value: KioskClientEvents[E]) => void): () => void {
    return this.events.on(event, listener);
  }

  once<E extends keyof KioskClientEvents & string>(event: E, listener: (value: KioskClientEvents[E]) => void): () => void {
    return this.events.once(event, listener);
  }

  /**
   * Opens the socket (within `connectTimeoutMs`), sends `session.start` and resolves with
   * `session.ready` (within `readyTimeoutMs`). Rejects with a KioskError: `connect_timeout`,
   * `ready_timeout`, `refused`, `connect_failed`, `closed_before_ready`, `start_refused`, `bad_frame`.
   */
  async connect(start: StartOptions = {}): Promise<SessionReadyFrame> {
    if (this.currentState !== 'idle') throw new KioskError('invalid_argument', `connect() is called once, on a new client (this one is ${this.currentState})`);
    const { resume = false, ...mode } = start;
    this.startFrame = mode.mode === 'voice' ? { type: 'session.start', resume, mode: 'voice', audio: mode.audio } : { type: 'session.start', resume };
    try {
      return await this.open();
    } catch (err) {
      this.finish({ reason: 'lost', error: err as KioskError });
      throw err;
    }
  }

  /**
   * Sends a typed turn and resolves with its `reply.done` (within `replyTimeoutMs`). Its turnId is
   * made unless given. While the client reconnects the turn waits and goes on the resumed socket.
   */
  turn(transcript: string, options: { turnId?: string } = {}): { turnId: string; reply: Promise<ReplyDoneFrame> } {
    this.requireSession();
    const problem = transcriptProblem(transcript) ?? (this.pending.size >= MAX_PENDING_TURNS ? `${MAX_PENDING_TURNS} turns are already waiting for their reply` : null);
    if (problem) throw new KioskError('invalid_argument', problem);
    const turnId = options.turnId ?? this.turnIds.next();
    this.turnIds.claim(turnId);
    const reply = new Promise<ReplyDoneFrame>((resolve, reject) => {
      const timer = setTimeout(
        () => this.settleTurn(turnId, new KioskError('reply_timeout', `no reply.done for turn ${turnId} within ${this.bounds.replyTimeoutMs / 1000} s`, { turnId })),
        this.bounds.replyTimeoutMs,
      );
      this.pending.set(turnId, { transcript, resolve, reject, timer, resent: false });
    });
    this.replyTurn = turnId;
    // While reconnecting it goes once the session is back (resendAfterResume).
    if (this.currentState === 'ready') this.send({ type: 'turn', turnId, transcript });
    return { turnId, reply };
  }

  /** Barge-in: stops the reply of `turnId` (default: the reply streaming or playing now). `playedMs`: how much was heard. */
  interrupt(turnId: string | null = this.replyTurn, playedMs?: number): void {
    this.requireSession();
    if (turnId === null) return;
    this.send(playedMs === undefined ? { type: 'interrupt', turnId } : { type: 'interrupt', turnId, playedMs });
  }

  /** Voice: stop (true) or resume (false) listening; kept across a resume. */
  mute(muted: boolean): void {
    this.requireSession();
    this.muted = muted;
    this.send({ type: 'mic', muted });
  }

  /** Voice: how much of the turn's reply audio has come out of the speaker (every ~250 ms while it plays). */
  playbackProgress(turnId: string, playedMs: number): void {
    this.send({ type: 'playback.progress', turnId, playedMs: Math.max(0, Math.round(playedMs)) });
  }

  /** Voice: the turn's reply audio finished playing. */
  playbackDone(turnId: string): void {
    this.send({ type: 'playback.done', turnId });
  }

  /**
   * Voice: one microphone frame (10–200 ms of PCM s16le at 16 kHz, or one Opus packet). Returns false
   * when it could not go (no live session, or reconnecting): a live microphone loses that audio.
   */
  sendAudio(payload: Uint8Array): boolean {
    if (this.currentState !== 'ready' || this.socket?.readyState !== OPEN) return false;
    this.socket.send(payload);
    return true;
  }

  /** Application-level liveness: resolves with the round trip in ms, or rejects with `pong_timeout`. */
  ping(): Promise<number> {
    this.requireSession();
    const sent = Date.now();
    return new Promise<number>((resolve, reject) => {
      const answered = () => {
        clearTimeout(timer);
        resolve(Date.now() - sent);
      };
      const timer = setTimeout(() => {
        const at = this.pongs.indexOf(answered);
        if (at >= 0) this.pongs.splice(at, 1);
        reject(new KioskError('pong_timeout', `no pong within ${this.bounds.pingTimeoutMs / 1000} s`));
      }, this.bounds.pingTimeoutMs);
      this.pongs.push(answered);
      this.send({ type: 'ping' });
    });
  }

  /** Ends the conversation (`session.end`): resolves with the close reason (within `endTimeoutMs`), then the socket is closed. */
  async end(): Promise<CloseReason | 'client'> {
    this.requireSession();
    const closed = new Promise<ClosedEvent>((resolve) => this.events.once('client.closed', resolve));
    this.send({ type: 'session.end' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new KioskError('end_timeout', `no session.closed within ${this.bounds.endTimeoutMs / 1000} s of session.end`)), this.bounds.endTimeoutMs);
    });
    try {
      return (await Promise.race([closed, timeout])).reason as CloseReason | 'client';
    } catch (err) {
      this.close();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the socket now, stops any resume, and fails the turns still waiting (`closed`). */
  close(): void {
    this.userClosed = true;
    if (this.retryWait) {
      clearTimeout(this.retryWait.timer);
      this.retryWait.resolve();
    }
    this.failAttach(new KioskError('closed', 'the client was closed'));
    this.finish({ reason: this.closedReason ?? 'client' });
  }

  // ── the socket ────────────────────────────────────────────────────────────────────────────────

  /** One socket, up to `session.ready`: both bounds, and every way it can fail, end in a KioskError. */
  private open(): Promise<SessionReadyFrame> {
    this.setState(this.currentState === 'reconnecting' ? 'reconnecting' : 'connecting');
    this.closedReason = null;
    return new Promise<SessionReadyFrame>((resolve, reject) => {
      const timer = setTimeout(
        () => this.failAttach(new KioskError('connect_timeout', `no answer from ${this.url} within ${this.bounds.connectTimeoutMs / 1000} s (is a kohami runtime listening there?)`)),
        this.bounds.connectTimeoutMs,
      );
      const attach: Attach = { resolve, reject, timer, opened: false };
      this.attach = attach;
      let socket: SocketLike;
      try {
        socket = this.factory(this.url, this.token);
      } catch (err) {
        // A factory's own KioskError (`unsupported_platform`) says it all.
        return this.failAttach(err instanceof KioskError ? err : new KioskError('connect_failed', `cannot connect to ${this.url}: ${(err as Error).message}`, { cause: err }));
      }
      this.socket = socket;
      socket.binaryType = 'arraybuffer';
      socket.onopen = () => {
        if (this.socket !== socket || this.attach !== attach) return;
        attach.opened = true;
        clearTimeout(attach.timer);
        attach.timer = setTimeout(
          () => this.failAttach(new KioskError('ready_timeout', `${this.url} accepted the connection but started no session within ${this.bounds.readyTimeoutMs / 1000} s (is it a kohami runtime?)`)),
          this.bounds.readyTimeoutMs,
        );
        if (this.currentState === 'connecting') this.setState('starting');
        socket.send(JSON.stringify(this.startFrame));
      };
      socket.onmessage = (event) => {
        if (this.socket === socket) this.receive(event.data);
      };
      // An error is always followed by a close, where it is handled. Never null: `ws` throws an error nobody listens to.
      socket.onerror = noop;
      socket.onclose = (event) => {
        if (this.socket === socket) this.lost(socket, event.code);
      };
    });
  }

  /** Ends the attempt under way (if any) with `err`, and lets its socket go. */
  private failAttach(err: KioskError): void {
    const attach = this.attach;
    if (!attach) return;
    this.attach = null;
    clearTimeout(attach.timer);
    this.dropSocket();
    attach.reject(err);
  }

  private dropSocket(): void {
    const socket = this.socket;
    if (!socket) return;
    this.socket = null;
    socket.onopen = noop;
    socket.onmessage = noop;
    socket.onclose = noop;
    try {
      socket.close(1000);
    } catch {
      // Already closing: nothing to let go.
    }
  }

  private lost(socket: SocketLike, code: number): void {
    this.socket = null;
    const attach = this.attach;
    if (attach) {
      if (attach.opened) return this.failAttach(new KioskError('closed_before_ready', 'the runtime closed the connection before the session started'));
      if (socket.httpStatus !== undefined) return this.failAttach(refusal(socket.httpStatus));
      if (!socket.probeUpgrade) return this.failAttach(this.unreachable(code));
      // The platform's WebSocket hides a refused upgrade behind the same close as an unreachable host: ask over HTTP.
      // A factory's own probe that throws counts as no answer.
      void socket.probeUpgrade(this.bounds.connectTimeoutMs).catch(() => null).then((status) => {
        if (this.attach !== attach) return;
        // A kohami runtime answers a plain GET with 404 once the token passes: that is no refusal of the upgrade.
        if (status === null) this.failAttach(this.unreachable(code));
        else if (status === 404) this.failAttach(new KioskError('connect_failed', `cannot connect to ${this.url}: the server answers (HTTP 404) but did not open the WebSocket (is it a kohami runtime's /v1/kiosk?)`));
        else this.failAttach(refusal(status));
      });
      return;
    }
    if (this.userClosed || this.currentState === 'closed') return;
    // The session is over (ended, replaced, erased …): nothing to resume. `shutdown` means "reconnect".
    if ((this.closedReason !== null && this.closedReason !== 'shutdown') || !this.backoff) {
      return this.finish({ reason: this.closedReason ?? 'lost' });
    }
    void this.resume(this.backoff);
  }

  private unreachable(code: number): KioskError {
    return new KioskError('connect_failed', `cannot reach ${this.url}: nothing answers there (the connection failed; close code ${code})`);
  }

  /** Jittered back-off, for as long as it takes unless bounded in attempts or time; each attempt is itself bounded by `open()`. */
  private async resume(backoff: Required<BackoffOptions>): Promise<void> {
    this.setState('reconnecting');
    // From now on every start asks for the live session back (window kept): a new one starts if it is gone.
    if (this.startFrame?.type === 'session.start') this.startFrame = { ...this.startFrame, resume: true };
    const lostAt = Date.now();
    let last: KioskError | null = null;
    for (let attempt = 1; attempt <= backoff.maxAttempts && !this.userClosed; attempt++) {
      const delayMs = backoffDelayMs(attempt, backoff, this.random);
      if (Date.now() - lostAt + delayMs > backoff.maxTotalMs) break;
      this.events.emit('client.reconnecting', { attempt, delayMs });
      await new Promise<void>((resolve) => (this.retryWait = { timer: setTimeout(resolve, delayMs), resolve }));
      this.retryWait = null;
      if (this.userClosed) return;
      try {
        await this.open();
        this.resendAfterResume();
        return;
      } catch (err) {
        last = err as KioskError;
        // A revoked token or a refused start will not get better by trying again.
        if ((last.code === 'refused' && (last.status === 401 || last.status === 403)) || (last.code === 'start_refused' && last.serverError?.code !== 'start_rate_limited')) break;
      }
    }
    if (this.userClosed) return;
    const error = new KioskError('resume_failed', `the connection to ${this.url} was lost and could not be resumed${last ? `: ${last.message}` : ''}`, { cause: last ?? undefined, status: last?.status });
    this.events.emit('client.error', error);
    this.finish({ reason: 'lost', error });
  }

  /** On a resumed socket: the mute state and every turn still waiting for its reply go again (same turnIds). */
  private resendAfterResume(): void {
    if (this.muted !== null) this.send({ type: 'mic', muted: this.muted });
    for (const [turnId, turn] of this.pending) {
      turn.resent = true;
      this.send({ type: 'turn', turnId, transcript: turn.transcript });
    }
  }

  /** The client is over: every wait fails, `client.closed` is said once. */
  private finish(event: ClosedEvent): void {
    if (this.currentState === 'closed') return;
    this.dropSocket();
    this.sessionReady = null;
    const why = event.error ?? new KioskError('closed', `the session is over (${event.reason})`);
    for (const turnId of [...this.pending.keys()]) this.settleTurn(turnId, new KioskError(why.code, why.message, { turnId, cause: why }));
    this.setState('closed');
    this.events.emit('client.closed', event);
  }

  // ── frames ────────────────────────────────────────────────────────────────────────────────────

  private receive(data: unknown): void {
    if (typeof data !== 'string') return this.receiveAudio(data);
    const parsed = parseServerFrame(data);
    if (!parsed.ok) {
      // Before the session is up, a frame that is not the protocol means this is not a kohami runtime.
      if (parsed.error.code === 'bad_frame' && this.attach) return this.failAttach(parsed.error);
      return this.events.emit('client.error', parsed.error);
    }
    const frame = parsed.frame;
    switch (frame.type) {
      case 'session.ready':
        this.ready(frame);
        break;
      case 'error':
        this.refused(frame);
        break;
      case 'reply.delta':
      case 'reply.audio.start':
        this.replyTurn = frame.turnId;
        break;
      case 'reply.done':
        this.settleTurn(frame.turnId, frame);
        break;
      case 'reply.audio.clear':
        this.cleared.add(frame.turnId);
        if (this.cleared.size > CLEARED_TURNS_KEPT) this.cleared.delete(this.cleared.values().next().value!);
        break;
      case 'pong':
        this.pongs.shift()?.();
        break;
      case 'session.closed':
        this.closedReason = frame.reason;
        break;
    }
    this.events.emit(frame.type, frame as never);
    // The session is over on this socket: let it go (a `shutdown` one is resumed from `lost`).
    if (frame.type === 'session.closed' && this.socket) this.lost(this.socketAfterClose(), 1000);
  }

  /** Closes the current socket quietly and returns it, so that `lost` decides what comes next. */
  private socketAfterClose(): SocketLike {
    const socket = this.socket!;
    this.dropSocket();
    return socket;
  }

  private ready(frame: SessionReadyFrame): void {
    const attach = this.attach;
    if (!attach) return; // a second ready on one socket: nothing waits for it
    this.attach = null;
    clearTimeout(attach.timer);
    this.sessionReady = frame;
    this.setState('ready');
    attach.resolve(frame);
  }

  /** An `error` frame: a refused start fails the attempt; a refused turn fails (or retries) that turn. */
  private refused(frame: ErrorFrame): void {
    if (this.attach && (frame.code === 'unsupported_audio_format' || frame.code === 'start_rate_limited')) {
      return this.failAttach(new KioskError('start_refused', `session.start refused: [${frame.code}] ${frame.message}`, { serverError: frame }));
    }
    const turn = frame.turnId === undefined ? undefined : this.pending.get(frame.turnId);
    if (!turn || frame.turnId === undefined) return;
    const turnId = frame.turnId;
    if (frame.code === 'rate_limited') {
      // Dropped unseen by the flood limit: the same turn again, a second later (its reply bound still runs).
      clearTimeout(turn.retry);
      turn.retry = setTimeout(() => this.send({ type: 'turn', turnId, transcript: turn.transcript }), RATE_LIMITED_RETRY_MS);
      return;
    }
    const err =
      frame.code === 'duplicate_turn' && turn.resent
        ? new KioskError('reply_lost', `turn ${turnId} was answered while the connection was lost; its reply did not arrive`, { turnId, serverError: frame })
        : new KioskError('turn_refused', `turn ${turnId} refused: [${frame.code}] ${frame.message}`, { turnId, serverError: frame });
    this.settleTurn(turnId, err);
  }

  private settleTurn(turnId: string, outcome: ReplyDoneFrame | KioskError): void {
    const turn = this.pending.get(turnId);
    if (!turn) return;
    this.pending.delete(turnId);
    clearTimeout(turn.timer);
    clearTimeout(turn.retry);
    if (outcome instanceof KioskError) turn.reject(outcome);
    else turn.resolve(outcome);
  }

  private receiveAudio(data: unknown): void {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
    if (!bytes || this.sessionReady?.mode !== 'voice') {
      return this.events.emit('client.error', new KioskError('bad_frame', 'the runtime sent a binary frame outside a voice session (dropped)'));
    }
    const decoded = decodeAudioFrame(bytes);
    if (!decoded.ok) return this.events.emit('client.error', decoded.error);
    if (!this.cleared.has(decoded.frame.turnId)) this.events.emit('audio', decoded.frame);
  }

  private send(frame: ClientFrame): void {
    if (this.socket?.readyState === OPEN) this.socket.send(JSON.stringify(frame));
  }

  private requireSession(): void {
    if (this.currentState !== 'ready' && this.currentState !== 'reconnecting') {
      throw new KioskError('not_ready', `no live session (the client is ${this.currentState}): connect() first`);
    }
  }

  private setState(state: ClientState): void {
    if (state === this.currentState) return;
    this.currentState = state;
    this.events.emit('client.state', state);
  }
}

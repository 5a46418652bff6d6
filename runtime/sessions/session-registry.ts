import { randomUUID } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { createActor, type Subscription } from 'xstate';
import { SeniorErasedError, type PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import { CacheFluxAdapter, type CacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { tracedCacheFlux } from '../../adapters/telemetry/traced-ports.ts';
import { TurnTraces, type VoiceTurnTiming } from '../../adapters/telemetry/turn-traces.ts';
import type { AgentPausePort, SeniorProfile } from '../../machines/session/ports.ts';
import { sessionView, type SessionView } from '../../machines/session/session-view.ts';
import type { WindowBudget } from '../../machines/session/window.ts';
import type { SessionActor, sessionMachine } from '../../machines/session/session.machine.ts';
import type { CloseReason, ReplyDone, SessionClosed } from '../../machines/session/session.types.ts';
import type { ServerFrame } from '../protocol/server-frames.ts';
import type { InspectionObserver } from '../ops/inspection-hub.ts';
import type { Takeovers } from './takeover.ts';

/** Where a live session's frames go; the gateway implements it over a WebSocket. */
export interface KioskLink {
  send(frame: ServerFrame): void;
}

export interface LiveSession {
  sessionId: string;
  seniorId: string;
  actor: SessionActor;
  link: KioskLink | null;
  connectedSince: number;
}

export interface RegistryOptions {
  machine: typeof sessionMachine;
  variations: CacheVariations;
  loadProfile: (seniorId: string) => Promise<SeniorProfile | null>;
  timing: { turnBudgetMs: number; sessionPauseMs: number; kioskGraceMs: number; agentStallMs: number; replyMaxMs: number };
  windowBudget: WindowBudget;
  /** The agent's provider's pause (Retry-After), read by every session before it calls the agent. */
  agentPause?: AgentPausePort;
  logger: Logger;
  /** Presence across runtime processes sharing the database. */
  presence: PgPresenceRepository;
  processId: string;
  /** A process whose heartbeat is older than this is dead (presence's rule): a takeover from it waits for nothing. */
  presenceStaleMs: number;
  /**
   * How a takeover of a session living in another process waits for that process to close it before
   * the new session answers (LISTEN/NOTIFY, bounded); without it, the old one closes at its next heartbeat.
   */
  takeovers?: Pick<Takeovers, 'released'>;
  /**
   * SHUTDOWN_TURN_GRACE_MS: at shutdown, how long a session's turn in flight may take to be answered
   * before the session closes (0, or absent: it ends at once with the SOS line, reason `shutdown`).
   */
  shutdownTurnGraceMs?: number;
  /**
   * XState's inspection events of every session actor (ops stream, Stately inspector): attached to the
   * actors only while the observer says someone watches, if it can tell (`watching`), else always.
   */
  inspect?: InspectionObserver;
  /** Each turn's span and its stages' (a no-op tracer unless traces are exported). */
  traces?: TurnTraces;
}

/** The steps of a new session's start that touch the database, as logged when one fails. */
export type StartStep = 'load_profile' | 'claim_presence';

/** A start failed at `step`; `cause` is the database's (or driver's) error, never logged as text. */
export class SessionStartError extends Error {
  override name = 'SessionStartError';
  readonly step: StartStep;
  override readonly cause: unknown;

  constructor(
    step: StartStep,
    cause: unknown,
  ) {
    super(`session start failed at ${step}`);
    this.step = step;
    this.cause = cause;
  }
}

/**
 * A later `session.start` for the same senior arrived while this one waited on the database: the
 * later one gets the session (as it would have taken it over), this one hears `replaced`.
 */
export class StartSupersededError extends Error {
  override name = 'StartSupersededError';
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A superseded waiter may have no listener left: its rejection is expected.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** A new session's start waiting on the database: whoever asked last gets it. */
interface PendingStart {
  link: KioskLink;
  waiter: Deferred<{ session: LiveSession; resumed: boolean }>;
  /** An erasure of the senior began meanwhile (`fence`): the start ends without a session at its next step. */
  erased: boolean;
}

/** The process is shutting down (SIGTERM): no new session starts here; the kiosk should reconnect elsewhere. */
export class ShuttingDownError extends Error {
  override name = 'ShuttingDownError';
}

/**
 * Session views built per event-loop turn by the presence heartbeat: all of them at once held the loop
 * 20–40 ms at 1,000 sessions and 70–120 ms at 5,000 (bench:load), every 5 s.
 */
const VIEW_CHUNK = 500;

/** One live session actor per senior in this process. */
export class SessionRegistry {
  private readonly bySenior = new Map<string, LiveSession>();
  private readonly closedListeners = new Set<(event: SessionClosed) => void>();
  private readonly turnListeners = new Set<(done: ReplyDone, session: LiveSession) => void>();
  private shuttingDown = false;
  /**
   * Per senior, the new session's start in flight, if any: at most one per senior, removed when it
   * settles (its database reads are bounded by the pool's wait), so never more than the seniors.
   */
  private readonly starting = new Map<string, PendingStart>();
  private beating: Promise<void> | null = null;
  /** Session actors the inspection observer is attached to, and how to detach it. */
  private readonly inspected = new WeakMap<SessionActor, Subscription>();
  /** Run at each beat before a session missing from presence is closed as `replaced` (see `onBeat`). */
  private beatHook: (() => Promise<void>) | null = null;
  readonly traces: TurnTraces;

  private readonly options: RegistryOptions;

  constructor(options: RegistryOptions) {
    this.options = options;
    this.traces = options.traces ?? new TurnTraces();
    // Someone starts or stops watching (an operator opens the ops stream…): every live actor follows.
    options.inspect?.watching?.onChange((active) => {
      for (const { actor } of this.bySenior.values()) {
        if (active) this.attachInspector(actor);
        else this.detachInspector(actor);
      }
    });
  }

  /** False once the process is shutting down: no session starts or resumes here any more. */
  get accepting(): boolean {
    return !this.shuttingDown;
  }

  /**
   * SIGTERM: refuse every new start, then close every live session as `shutdown` — an idle one at
   * once, one in a turn right after that turn's reply.done (at most `shutdownTurnGraceMs`, past which
   * the turn ends with the SOS line): a deploy answers the question a senior has just asked.
   * Resolves with the number of turns it waited for.
   */
  async shutdown(): Promise<number> {
    this.shuttingDown = true;
    const graceMs = this.options.shutdownTurnGraceMs ?? 0;
    const answering: Promise<void>[] = [];
    for (const session of [...this.bySenior.values()]) {
      if (graceMs > 0 && session.actor.getSnapshot().context.current) answering.push(this.closeAfterTurn(session, graceMs));
      else session.actor.send({ type: 'CLOSE', reason: 'shutdown' });
    }
    await Promise.all(answering);
    return answering.length;
  }

  private closeAfterTurn(session: LiveSession, graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const close = () => {
        clearTimeout(timer);
        done.unsubscribe();
        ended.unsubscribe();
        // Queued behind the reply.done being emitted (the kiosk gets it first), before any frame the socket brings next.
        session.actor.send({ type: 'CLOSE', reason: 'shutdown' });
        resolve();
      };
      const timer = setTimeout(close, graceMs);
      const done = session.actor.on('reply.done', close);
      // Closed meanwhile (its kiosk ended it, an erasure): nothing to wait for.
      const ended = session.actor.on('SessionClosed', close);
    });
  }

  get size(): number {
    return this.bySenior.size;
  }

  get(seniorId: string): LiveSession | undefined {
    return this.bySenior.get(seniorId);
  }

  list(): LiveSession[] {
    return [...this.bySenior.values()];
  }

  findSession(sessionId: string): LiveSession | undefined {
    return this.list().find((s) => s.sessionId === sessionId);
  }

  views(): SessionView[] {
    return this.list().map((s) => sessionView(s.actor.getSnapshot()));
  }

  /** Every finished turn (metrics subscribe here); the frame carries no more than the kiosk gets. */
  onTurn(listener: (done: ReplyDone, session: LiveSession) => void): () => void {
    this.turnListeners.add(listener);
    return () => this.turnListeners.delete(listener);
  }

  /** Every close, with the in-memory turns: the close-time jobs subscribe here. */
  onSessionClosed(listener: (event: SessionClosed) => void): () => void {
    this.closedListeners.add(listener);
    return () => this.closedListeners.delete(listener);
  }

  /**
   * Opens the senior's session on `link`. A live session is resumed when asked
   * (the actor keeps its window), otherwise replaced; either way the previous
   * link hears `session.closed {reason: "replaced"}`.
   *
   * A start while another one for the same senior still waits on the database joins it instead of
   * reading everything again: the session about to be born has an empty window, exactly what this
   * start would make, so this later start takes it (resume or not, `resumed: false`) and the earlier
   * one is refused with `StartSupersededError` (its kiosk hears `replaced`, as it would have once
   * taken over). A flood of starts from one kiosk costs the database one start at a time.
   */
  async start(seniorId: string, link: KioskLink, resume: boolean): Promise<{ session: LiveSession; resumed: boolean }> {
    if (this.shuttingDown) throw new ShuttingDownError('this runtime is shutting down');
    const pending = this.starting.get(seniorId);
    if (pending) {
      const earlier = pending.waiter;
      pending.link = link;
      pending.waiter = deferred();
      earlier.reject(new StartSupersededError('a later session.start for this senior took this one over'));
      return pending.waiter.promise;
    }
    const existing = this.bySenior.get(seniorId);
    if (existing && resume) {
      if (existing.link && existing.link !== link) existing.link.send({ type: 'session.closed', reason: 'replaced' });
      existing.link = link;
      existing.connectedSince = Date.now();
      existing.actor.send({ type: 'SOCKET.ATTACHED' });
      return { session: existing, resumed: true };
    }
    if (existing) existing.actor.send({ type: 'CLOSE', reason: 'replaced' });

    const record: PendingStart = { link, waiter: deferred(), erased: false };
    this.starting.set(seniorId, record);
    this.create(seniorId, record).then(
      (session) => record.waiter.resolve({ session, resumed: false }),
      (err: unknown) => record.waiter.reject(err),
    );
    return record.waiter.promise;
  }

  private async create(seniorId: string, record: PendingStart): Promise<LiveSession> {
    try {
      const profile = await this.options.loadProfile(seniorId).catch((err: unknown) => {
        throw new SessionStartError('load_profile', err);
      });
      // The socket was opened with a token of this senior: only an erasure removes a senior.
      if (!profile || record.erased) throw new SeniorErasedError('the senior is being erased, or was');
      const sessionId = randomUUID();
      // Another live process's session for this senior is told at the claim's commit; this one answers
      // once that one has stopped (bounded: see Takeovers), and its heartbeat is the fallback.
      // The claim itself refuses a senior an erasure has fenced (SeniorErasedError, passed on as it is).
      const previous = await this.options.presence.claim(seniorId, sessionId, this.options.processId, this.options.presenceStaleMs).catch((err: unknown) => {
        throw err instanceof SeniorErasedError ? err : new SessionStartError('claim_presence', err);
      });
      if (previous?.live && previous.processId !== this.options.processId) await this.options.takeovers?.released(previous.sessionId);
      // A shutdown, or an erasure whose fence came after this claim, may have begun during the awaits:
      // the new session would be born orphaned, or outlive the erasure. Checked in the tick that spawns.
      if (this.shuttingDown || record.erased) {
        await this.options.presence.release(sessionId).catch(() => {});
        throw record.erased ? new SeniorErasedError('the senior is being erased') : new ShuttingDownError('this runtime is shutting down');
      }
      // The senior's previous session, if its close has not gone through yet: the new one takes over.
      this.bySenior.get(seniorId)?.actor.send({ type: 'CLOSE', reason: 'replaced' });
      // Whoever asked last (a start that joined this one) gets the session.
      return this.spawn(sessionId, seniorId, profile, record.link);
    } finally {
      if (this.starting.get(seniorId) === record) this.starting.delete(seniorId);
    }
  }

  /**
   * An erasure of the senior has begun (its fence is committed: no claim succeeds any more): the start
   * in flight, whatever step it is at, ends without a session (its kiosk hears `erased` now, and a
   * presence row it claimed is released), and the live session closes as `erased`. Synchronous, so no
   * start can spawn between the check and the close. True if a session or a start was stopped.
   */
  fence(seniorId: string): boolean {
    const pending = this.starting.get(seniorId);
    if (pending) {
      pending.erased = true;
      pending.waiter.reject(new SeniorErasedError('the senior is being erased'));
      // A start arriving later goes to the database on its own, and its claim is refused there.
      this.starting.delete(seniorId);
    }
    return this.close(seniorId, 'erased') || pending !== undefined;
  }

  /** Seniors with a new session's start waiting on the database now. */
  get startsInFlight(): number {
    return this.starting.size;
  }

  /**
   * The senior's turn, typed or transcribed: its span opens (a voice turn's from the end of speech,
   * with its transcription), then the actor answers it. Every turn reaches the actor through here.
   * `opened` is handed the span's context before the actor runs (a CacheFlux reply is told at once).
   */
  turn(session: LiveSession, turnId: string, transcript: string, voice?: VoiceTurnTiming, opened?: (trace: Context) => void): void {
    // A closed actor ignores the turn: no span that nothing would end.
    if (session.actor.getSnapshot().status !== 'active') return;
    const trace = this.traces.begin({ sessionId: session.sessionId, seniorId: session.seniorId, turnId }, voice ? 'voice' : 'text', voice);
    opened?.(trace);
    session.actor.send({ type: 'TURN', turnId, transcript });
  }

  /** The kiosk's socket is gone: the session waits out its grace period for a resume. */
  detach(session: LiveSession, link: KioskLink): void {
    if (session.link !== link) return;
    session.link = null;
    session.actor.send({ type: 'SOCKET.LOST' });
  }

  /** Another process took the senior over: its session `sessionId`, if it still lives here, closes now. */
  closeReplaced(seniorId: string, sessionId: string): void {
    const session = this.bySenior.get(seniorId);
    if (session?.sessionId === sessionId) session.actor.send({ type: 'CLOSE', reason: 'replaced' });
  }

  close(seniorId: string, reason: CloseReason): boolean {
    const session = this.bySenior.get(seniorId);
    session?.actor.send({ type: 'CLOSE', reason });
    return session !== undefined;
  }

  closeAll(reason: CloseReason): void {
    for (const session of [...this.bySenior.values()]) session.actor.send({ type: 'CLOSE', reason });
  }

  /**
   * `hook` runs at each beat, after presence is read and before the sessions missing from it are
   * closed as `replaced`: erasures made through another process (whose sweep removed the session's
   * row) close theirs as `erased` there. It must not throw.
   */
  onBeat(hook: () => Promise<void>): void {
    this.beatHook = hook;
  }

  /**
   * Writes this process's sessions to the presence table; closes, as `replaced`, any that
   * another process has since claimed for the same senior, and as `operator` any that an
   * operator closed through another process. A beat still running when the next is due (a
   * database slower than PRESENCE_HEARTBEAT_MS) is not doubled: the next one is skipped.
   */
  async heartbeat(staleMs: number): Promise<void> {
    if (this.beating) return this.beating;
    this.beating = this.beat(staleMs).finally(() => (this.beating = null));
    return this.beating;
  }

  private async beat(staleMs: number): Promise<void> {
    const sessions = this.list();
    const views: SessionView[] = [];
    for (let i = 0; i < sessions.length; i += VIEW_CHUNK) {
      // Turns run between chunks: the views of every session at once held the event loop.
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const session of sessions.slice(i, i + VIEW_CHUNK)) views.push(sessionView(session.actor.getSnapshot()));
    }
    const owned = await this.options.presence.heartbeat(this.options.processId, views, staleMs);
    await this.beatHook?.();
    for (const session of sessions) {
      // Closed meanwhile: by the hook (an erasure elsewhere), or by its kiosk.
      if (session.actor.getSnapshot().status !== 'active') continue;
      if (!owned.has(session.sessionId)) session.actor.send({ type: 'CLOSE', reason: 'replaced' });
      else if (owned.get(session.sessionId)) session.actor.send({ type: 'CLOSE', reason: 'operator' });
    }
  }

  private spawn(sessionId: string, seniorId: string, profile: SeniorProfile, link: KioskLink): LiveSession {
    const actor = createActor(this.options.machine, {
      input: {
        sessionId,
        seniorId,
        profile,
        cacheFlux: tracedCacheFlux(new CacheFluxAdapter(this.options.variations), seniorId, this.traces),
        windowBudget: this.options.windowBudget,
        ...(this.options.agentPause ? { agentPause: this.options.agentPause } : {}),
        ...this.options.timing,
      },
    });
    const session: LiveSession = { sessionId, seniorId, actor, link, connectedSince: Date.now() };
    actor.on('reply.delta', (e) => session.link?.send({ type: 'reply.delta', turnId: e.turnId, text: e.text }));
    actor.on('reply.done', (done) => {
      const { type, turnId, text, flux, latencyMs, interrupted, sosReason } = done;
      session.link?.send({ type, turnId, text, flux, latencyMs, ...(interrupted ? { interrupted } : {}), ...(sosReason ? { reason: sosReason } : {}) });
      this.traces.end({ sessionId, seniorId, turnId }, { flux, latencyMs, ...(interrupted ? { interrupted } : {}), ...(sosReason ? { sosReason } : {}) });
      for (const listener of this.turnListeners) listener(done, session);
    });
    actor.on('SessionClosed', (event) => {
      if (this.bySenior.get(seniorId) === session) this.bySenior.delete(seniorId);
      this.traces.closeSession(seniorId, sessionId);
      this.options.presence.release(sessionId).catch((err: unknown) => this.options.logger.warn({ err, sessionId }, 'presence release failed'));
      session.link?.send({ type: 'session.closed', reason: event.reason });
      session.link = null;
      this.options.logger.info({ sessionId, seniorId, reason: event.reason, turns: event.turns.length }, 'session closed');
      for (const listener of this.closedListeners) {
        try {
          listener(event);
        } catch (err) {
          this.options.logger.error({ err, sessionId }, 'session-closed listener failed');
        }
      }
    });
    actor.subscribe({ error: (err) => this.options.logger.error({ err, sessionId }, 'session actor failed') });
    this.bySenior.set(seniorId, session);
    if (this.watched) this.attachInspector(actor);
    actor.start();
    this.options.logger.info({ sessionId, seniorId }, 'session started');
    return session;
  }

  /** Someone receives the inspection events; an observer that cannot tell is always attached. */
  private get watched(): boolean {
    const observe = this.options.inspect;
    return observe !== undefined && (observe.watching?.active() ?? true);
  }

  private attachInspector(actor: SessionActor): void {
    const observe = this.options.inspect;
    if (!observe || this.inspected.has(actor)) return;
    this.inspected.set(actor, actor.system.inspect(observe));
    // Attached after the actor's creation: the observer hears of it first, as XState tells an observer given at creation.
    observe({ type: '@xstate.actor', actorRef: actor, rootId: actor.sessionId });
  }

  private detachInspector(actor: SessionActor): void {
    this.inspected.get(actor)?.unsubscribe();
    this.inspected.delete(actor);
  }
}

import type { EventLoopUtilization } from 'node:perf_hooks';
import type pg from 'pg';
import type { InspectionEvent } from 'xstate';

/**
 * bench:load's look inside the runtime process (never in the runtime itself): where an agent turn's
 * time goes, stage by stage, from XState's inspection events, and what the database pool does —
 * queries per second by kind, the wait for a pool connection, the whole round trip. Turn ids and SQL
 * kinds only: no transcript, no reply.
 */

/** performance.now() when an agent turn reached each stage. */
export interface AgentStages {
  turn: number;
  recall?: number;
  semanticCache?: number;
  agent?: number;
  firstChunk?: number;
}

export interface StageFigures {
  /** The stage's name → [p50, p99] ms over the agent turns that reached its end. */
  stages: Record<string, [number, number]>;
  turns: number;
}

export interface PoolFigures {
  /** Queries per second by their SQL's first words. */
  perSecond: Record<string, number>;
  waitMs: [number, number];
  /** A query's round trip once it has its connection (the wait for one is `waitMs`). */
  roundTripMs: [number, number];
  /** The longest round trip of each kind of query (its connection held meanwhile), ms. */
  longestMs: Record<string, number>;
  /** Most callers seen waiting for a connection at once (sampled every 50 ms). */
  maxWaiting: number;
  size: number;
}

const percentiles = (xs: number[]): [number, number] => {
  const sorted = [...xs].sort((a, b) => a - b);
  const pick = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
  return [pick(50), pick(99)];
};

/**
 * Timestamps an agent turn's stages from XState's inspection events of a session actor: `start` makes
 * the record at the TURN event; entering recall, semanticCache and agent, and the first chunk, fill it.
 */
export function recordAgentStages<S extends AgentStages>(turns: Map<string, S>, event: InspectionEvent, start: (turnId: string, transcript: string) => S): void {
  if (event.actorRef.sessionId !== event.rootId) return;
  if (event.type === '@xstate.event' && event.event.type === 'TURN') {
    const { turnId, transcript } = event.event as unknown as { turnId: string; transcript: string };
    turns.set(turnId, start(turnId, transcript));
    return;
  }
  if (event.type !== '@xstate.snapshot') return;
  const snapshot = event.snapshot as unknown as { value: { live?: { conversation?: unknown } }; context?: { current: { turnId: string; reply: string } | null } };
  const current = snapshot.context?.current;
  const stages = current && turns.get(current.turnId);
  const conversation = snapshot.value.live?.conversation as { turn?: string | object } | undefined;
  if (!stages || typeof conversation !== 'object' || !conversation.turn) return;
  const stage = typeof conversation.turn === 'string' ? conversation.turn : 'agent';
  if (stage === 'recall' || stage === 'semanticCache' || stage === 'agent') stages[stage] ??= performance.now();
  if (stage === 'agent' && current.reply.length > 0) stages.firstChunk ??= performance.now();
}

/** Agent turns' stages: TURN → recall entered → semantic cache entered → agent entered → first chunk. */
export class AgentStageProbe {
  private turns = new Map<string, AgentStages>();

  readonly inspect = (event: InspectionEvent): void => recordAgentStages(this.turns, event, () => ({ turn: performance.now() }));

  reset(): void {
    this.turns.clear();
  }

  /** Each span over the turns that reached both its ends (an SOS turn counts up to where it stopped). */
  figures(firstTokenMs: number): StageFigures {
    const spans: Record<string, number[]> = { 'TURN → recall': [], recall: [], 'semantic cache': [], 'agent → first chunk − fake': [] };
    const span = (name: string, from?: number, to?: number, minus = 0) => {
      if (from !== undefined && to !== undefined) spans[name]!.push(to - from - minus);
    };
    let turns = 0;
    for (const s of this.turns.values()) {
      if (s.recall === undefined) continue; // a CacheFlux hit
      turns += 1;
      span('TURN → recall', s.turn, s.recall);
      span('recall', s.recall, s.semanticCache);
      span('semantic cache', s.semanticCache, s.agent);
      span('agent → first chunk − fake', s.agent, s.firstChunk, firstTokenMs);
    }
    return { turns, stages: Object.fromEntries(Object.entries(spans).map(([k, xs]) => [k, percentiles(xs)])) };
  }
}

type QueryCallback = (err: Error | null, res: unknown) => void;
type ClientQuery = (text: unknown, values?: unknown, cb?: QueryCallback) => unknown;

/**
 * Wraps the runtime pool's `connect` (on this instance only; pg-pool's own `query` goes through it)
 * and the `query` of each client it hands out, so that both `pool.query` and a checked-out client's
 * queries (`pool.connect()` + `client.query`, as the consent check does) are counted and timed.
 */
export class PoolProbe {
  private counts = new Map<string, number>();
  private longest = new Map<string, number>();
  private waits: number[] = [];
  private roundTrips: number[] = [];
  private maxWaiting = 0;
  private readonly wrapped = new WeakSet<object>();
  private since = performance.now();

  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
    const connect = pool.connect.bind(pool) as (cb?: (err: Error | undefined, client: pg.PoolClient, done: unknown) => void) => Promise<pg.PoolClient> | undefined;
    (pool as unknown as { connect: unknown }).connect = (cb?: (err: Error | undefined, client: pg.PoolClient, done: unknown) => void) => {
      const at = performance.now();
      const handed = (client: pg.PoolClient | undefined) => {
        this.waits.push(performance.now() - at);
        if (client) this.wrap(client);
      };
      if (!cb) {
        return connect()!.then((client) => {
          handed(client);
          return client;
        });
      }
      return connect((err, client, done) => {
        handed(err ? undefined : client);
        cb(err, client, done);
      });
    };
    setInterval(() => (this.maxWaiting = Math.max(this.maxWaiting, pool.waitingCount)), 50).unref();
  }

  /** Counts a client's queries by their SQL's first words and times each (the connection is held meanwhile). */
  private wrap(client: pg.PoolClient): void {
    if (this.wrapped.has(client)) return;
    this.wrapped.add(client);
    const query = client.query.bind(client) as ClientQuery;
    (client as unknown as { query: ClientQuery }).query = (text, values, cb) => {
      const sql = typeof text === 'string' ? text : String((text as { text?: string }).text ?? '?');
      const kind = sql.trim().split(/\s+/).slice(0, 3).join(' ').slice(0, 40);
      this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
      const at = performance.now();
      const done = () => {
        const ms = performance.now() - at;
        this.roundTrips.push(ms);
        this.longest.set(kind, Math.max(ms, this.longest.get(kind) ?? 0));
      };
      const callback = typeof values === 'function' ? (values as QueryCallback) : cb;
      if (callback) {
        const timed: QueryCallback = (err, res) => {
          done();
          callback(err, res);
        };
        return typeof values === 'function' ? query(text, timed) : query(text, values, timed);
      }
      const result = query(text, values) as Promise<unknown>;
      void result.then(done, () => {});
      return result;
    };
  }

  reset(): void {
    this.counts.clear();
    this.longest.clear();
    this.waits = [];
    this.roundTrips = [];
    this.maxWaiting = 0;
    this.since = performance.now();
  }

  figures(): PoolFigures {
    const seconds = (performance.now() - this.since) / 1000;
    const perSecond = Object.fromEntries([...this.counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, Math.round(n / seconds)]));
    const longestMs = Object.fromEntries([...this.longest].map(([k, ms]) => [k, Math.round(ms)]));
    return { perSecond, longestMs, waitMs: percentiles(this.waits), roundTripMs: percentiles(this.roundTrips), maxWaiting: this.maxWaiting, size: this.pool.options.max };
  }
}

/** How busy a thread's event loop was since the last reset (the embedded database's: PGlite runs synchronously in it). */
export class ThreadProbe {
  private last: EventLoopUtilization;

  private readonly utilization: (since?: EventLoopUtilization) => EventLoopUtilization;

  constructor(utilization: (since?: EventLoopUtilization) => EventLoopUtilization) {
    this.utilization = utilization;
    this.last = utilization();
  }

  reset(): void {
    this.last = this.utilization();
  }

  /** Percent of the time the thread was busy. */
  busy(): number {
    return this.utilization(this.last).utilization * 100;
  }
}

/** This process's CPU (every thread) as a share of one core since the last reset. */
export class CpuProbe {
  private usage = process.cpuUsage();
  private at = performance.now();

  reset(): void {
    this.usage = process.cpuUsage();
    this.at = performance.now();
  }

  /** Percent of one core. */
  share(): number {
    const used = process.cpuUsage(this.usage);
    return ((used.user + used.system) / 1000 / (performance.now() - this.at)) * 100;
  }
}

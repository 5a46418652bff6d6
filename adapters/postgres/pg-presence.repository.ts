import type pg from 'pg';
import type { SessionView } from '../../machines/session/session-view.ts';
import { SIGNAL_CHANNEL, signalPayload } from './pg-signals.ts';

/**
 * The senior's advisory lock, for the transaction: a presence claim and an erasure's fence take it,
 * so one of them commits before the other reads.
 */
export const SENIOR_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtextextended('kohami.senior:' || $1, 0))`;

/** A claim for a senior being erased (the erasure's fence is set) or erased (the row is gone): no session may start. */
export class SeniorErasedError extends Error {
  override name = 'SeniorErasedError';
}

/** A process's beat: its row, fresh. */
const BEAT_SQL = `INSERT INTO presence_processes (process_id) VALUES ($1) ON CONFLICT (process_id) DO UPDATE SET heartbeat_at = now()`;

export interface PresenceRow {
  sessionId: string;
  seniorId: string;
  processId: string;
  state: string;
  currentFlux: string | null;
  turnCount: number;
  lastLatencyMs: number | null;
  lastFlux: string | null;
  connectedSince: string;
  heartbeatAt: string;
}

/** Changed session views written per statement: each holds the database ~15–25 ms at most, turns' queries run between. */
const VIEW_WRITE_CHUNK = 500;

/** What a session row shows of its view: the row is rewritten only when this changes. */
const viewKey = (v: SessionView) => `${v.state}|${v.currentFlux}|${v.turnCount}|${v.lastTurn?.latencyMs}|${v.lastTurn?.flux}`;

/** The session a claim took over: its process was live (heartbeat fresher than the claim's `staleMs`), or not. */
export interface ClaimedFrom {
  sessionId: string;
  processId: string;
  live: boolean;
}

/**
 * `session_presence`: the live sessions of every runtime process sharing the database, live while
 * their process's row in `presence_processes` is fresh (one row per beat, not one per session).
 * A claim takes the senior's advisory lock for its transaction, so two processes starting
 * a session for one senior at once are serialized and the later one takes over, and a claim and an
 * erasure's fence (`PgErasureRepository.fence`) are ordered: no claim succeeds after the fence.
 */
export class PgPresenceRepository {
  /** The view last written to each of this process's session rows. */
  private readonly written = new Map<string, string>();

  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * Registers the session as the senior's live one; returns the session it replaced, if any. Refuses
   * (`SeniorErasedError`, nothing written) a senior an erasure has fenced or removed. When
   * that one lives in another live process, the claim NOTIFYs it (`takeover`, delivered at the
   * claim's commit, so never for a claim that failed).
   */
  async claim(seniorId: string, sessionId: string, processId: string, staleMs: number): Promise<ClaimedFrom | null> {
    const client = await this.pool.connect();
    try {
      // Listed at once, before this process's first beat, and never an orphan for another process's cleanup.
      // Outside the transaction: the process row stays locked for this statement only, not for each claim.
      await client.query(BEAT_SQL, [processId]);
      await client.query('BEGIN');
      await client.query(SENIOR_LOCK_SQL, [seniorId]);
      // Read under the lock: an erasure's fence committed before this claim is seen, one after it sees this row.
      const senior = await client.query<{ fenced: boolean }>('SELECT erasing_since IS NOT NULL AS fenced FROM seniors WHERE id = $1::uuid', [seniorId]);
      if (senior.rows[0]?.fenced !== false) throw new SeniorErasedError('the senior is being erased, or was');
      const previous = await client.query<{ session_id: string; process_id: string; live: boolean }>(
        `SELECT p.session_id, p.process_id, COALESCE(pp.heartbeat_at >= now() - make_interval(secs => $2::float8 / 1000), false) AS live
           FROM session_presence p LEFT JOIN presence_processes pp ON pp.process_id = p.process_id
          WHERE p.senior_id = $1::uuid`,
        [seniorId, staleMs],
      );
      const row = previous.rows[0];
      if (row && row.live && row.process_id !== processId) {
        const takeover = { kind: 'takeover' as const, to: row.process_id, by: processId, senior: seniorId, session: row.session_id };
        await client.query('SELECT pg_notify($1, $2)', [SIGNAL_CHANNEL, signalPayload(takeover)]);
      }
      await client.query(
        `INSERT INTO session_presence (session_id, senior_id, process_id) VALUES ($1, $2, $3)
         ON CONFLICT (senior_id) DO UPDATE SET session_id = $1, process_id = $3, state = 'conversation.idle',
           current_flux = NULL, turn_count = 0, last_latency_ms = NULL, last_flux = NULL, connected_since = now()`,
        [sessionId, seniorId, processId],
      );
      await client.query('COMMIT');
      return row ? { sessionId: row.session_id, processId: row.process_id, live: row.live } : null;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * This process's beat: one row. Then removes the processes silent for `staleMs` with their
   * sessions (they died), and writes the views that changed since this process last wrote them.
   * Returns the sessions it still holds, each with a close an operator requested from another
   * process, if any (a missing session was taken over by another process).
   */
  async heartbeat(processId: string, views: SessionView[], staleMs: number): Promise<Map<string, 'operator' | null>> {
    await this.pool.query(BEAT_SQL, [processId]);
    // Rows of no process at all (left by a process removed mid-claim) go too. The NOT EXISTS sees the
    // processes before this statement's own DELETE, hence the stale ones named explicitly.
    await this.pool.query(
      `WITH stale AS (DELETE FROM presence_processes WHERE heartbeat_at < now() - make_interval(secs => $1::float8 / 1000) RETURNING process_id)
       DELETE FROM session_presence p
        WHERE p.process_id IN (SELECT process_id FROM stale)
           OR NOT EXISTS (SELECT 1 FROM presence_processes pp WHERE pp.process_id = p.process_id)`,
      [staleMs],
    );
    const res = await this.pool.query<{ session_id: string; close_requested: 'operator' | null }>(
      'SELECT session_id, close_requested FROM session_presence WHERE process_id = $1',
      [processId],
    );
    const owned = new Map(res.rows.map((r) => [r.session_id, r.close_requested]));
    for (const sessionId of this.written.keys()) if (!owned.has(sessionId)) this.written.delete(sessionId);
    const changed = views.filter((v) => owned.has(v.sessionId) && this.written.get(v.sessionId) !== viewKey(v));
    for (let i = 0; i < changed.length; i += VIEW_WRITE_CHUNK) await this.writeViews(processId, changed.slice(i, i + VIEW_WRITE_CHUNK));
    return owned;
  }

  private async writeViews(processId: string, views: SessionView[]): Promise<void> {
    await this.pool.query(
      `UPDATE session_presence p SET state = v.state, current_flux = v.current_flux, turn_count = v.turn_count,
              last_latency_ms = v.last_latency_ms, last_flux = v.last_flux
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[])
              AS v(session_id, state, current_flux, turn_count, last_latency_ms, last_flux)
        WHERE p.session_id = v.session_id AND p.process_id = $1`,
      [
        processId,
        views.map((v) => v.sessionId),
        views.map((v) => v.state),
        views.map((v) => v.currentFlux),
        views.map((v) => v.turnCount),
        views.map((v) => v.lastTurn?.latencyMs ?? null),
        views.map((v) => v.lastTurn?.flux ?? null),
      ],
    );
    for (const v of views) this.written.set(v.sessionId, viewKey(v));
  }

  /** Asks the process holding the session to close it; false if no live session has that id. */
  async requestClose(sessionId: string): Promise<boolean> {
    const res = await this.pool.query(`UPDATE session_presence SET close_requested = 'operator' WHERE session_id = $1::uuid`, [sessionId]);
    return (res.rowCount ?? 0) > 0;
  }

  /** Other processes than `processId` whose heartbeat is fresher than `staleMs`. */
  async livePeers(processId: string, staleMs: number): Promise<number> {
    const res = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM presence_processes WHERE process_id <> $1 AND heartbeat_at >= now() - make_interval(secs => $2::float8 / 1000)`,
      [processId, staleMs],
    );
    return res.rows[0]?.n ?? 0;
  }

  /** Whether a live process other than `processId` still holds a session of the senior. */
  async heldElsewhere(seniorId: string, processId: string, staleMs: number): Promise<boolean> {
    const res = await this.pool.query(
      `SELECT 1 FROM session_presence p JOIN presence_processes pp ON pp.process_id = p.process_id
        WHERE p.senior_id = $1::uuid AND p.process_id <> $2 AND pp.heartbeat_at >= now() - make_interval(secs => $3::float8 / 1000)`,
      [seniorId, processId, staleMs],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async release(sessionId: string): Promise<void> {
    this.written.delete(sessionId);
    await this.pool.query('DELETE FROM session_presence WHERE session_id = $1::uuid', [sessionId]);
  }

  async releaseProcess(processId: string): Promise<void> {
    this.written.clear();
    await this.pool.query(
      'WITH gone AS (DELETE FROM presence_processes WHERE process_id = $1) DELETE FROM session_presence WHERE process_id = $1',
      [processId],
    );
  }

  /** Live sessions of every process whose heartbeat is fresher than `staleMs`. */
  async list(staleMs: number): Promise<PresenceRow[]> {
    const res = await this.pool.query<Record<string, unknown>>(
      `SELECT p.session_id, p.senior_id, p.process_id, p.state, p.current_flux, p.turn_count, p.last_latency_ms, p.last_flux, p.connected_since, pp.heartbeat_at
         FROM session_presence p JOIN presence_processes pp ON pp.process_id = p.process_id
        WHERE pp.heartbeat_at >= now() - make_interval(secs => $1::float8 / 1000) ORDER BY p.connected_since`,
      [staleMs],
    );
    return res.rows.map((r) => ({
      sessionId: r.session_id as string,
      seniorId: r.senior_id as string,
      processId: r.process_id as string,
      state: r.state as string,
      currentFlux: (r.current_flux as string | null) ?? null,
      turnCount: r.turn_count as number,
      lastLatencyMs: (r.last_latency_ms as number | null) ?? null,
      lastFlux: (r.last_flux as string | null) ?? null,
      connectedSince: (r.connected_since as Date).toISOString(),
      heartbeatAt: (r.heartbeat_at as Date).toISOString(),
    }));
  }
}

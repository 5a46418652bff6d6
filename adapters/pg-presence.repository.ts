import type pg from 'pg';
import type { SessionView } from '../machines/session-view.ts';

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

/**
 * `session_presence`: the live sessions of every runtime process sharing the database.
 * A claim takes the senior's advisory lock for its transaction, so two processes starting
 * a session for one senior at once are serialized and the later one takes over.
 */
export class PgPresenceRepository {
  constructor(private readonly pool: pg.Pool) {}

  /** Registers the session as the senior's live one; returns the session it replaced, if any. */
  async claim(seniorId: string, sessionId: string, processId: string): Promise<{ sessionId: string; processId: string } | null> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('kohami.senior:' || $1, 0))`, [seniorId]);
      const previous = await client.query<{ session_id: string; process_id: string }>(
        'SELECT session_id, process_id FROM session_presence WHERE senior_id = $1::uuid',
        [seniorId],
      );
      await client.query(
        `INSERT INTO session_presence (session_id, senior_id, process_id) VALUES ($1, $2, $3)
         ON CONFLICT (senior_id) DO UPDATE SET session_id = $1, process_id = $3, state = 'conversation.idle',
           current_flux = NULL, turn_count = 0, last_latency_ms = NULL, last_flux = NULL, connected_since = now(), heartbeat_at = now()`,
        [sessionId, seniorId, processId],
      );
      await client.query('COMMIT');
      const row = previous.rows[0];
      return row ? { sessionId: row.session_id, processId: row.process_id } : null;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Refreshes this process's rows from its actors; returns the sessions it still holds, each
   * with a close an operator requested from another process, if any (a missing session was
   * taken over by another process). Rows of processes silent for `staleMs` are removed:
   * their process died.
   */
  async heartbeat(processId: string, views: SessionView[], staleMs: number): Promise<Map<string, 'operator' | null>> {
    await this.pool.query(`DELETE FROM session_presence WHERE heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)`, [staleMs]);
    if (views.length === 0) return new Map();
    const res = await this.pool.query<{ session_id: string; close_requested: 'operator' | null }>(
      `UPDATE session_presence p SET state = v.state, current_flux = v.current_flux, turn_count = v.turn_count,
              last_latency_ms = v.last_latency_ms, last_flux = v.last_flux, heartbeat_at = now()
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[])
              AS v(session_id, state, current_flux, turn_count, last_latency_ms, last_flux)
        WHERE p.session_id = v.session_id AND p.process_id = $1
        RETURNING p.session_id, p.close_requested`,
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
    return new Map(res.rows.map((r) => [r.session_id, r.close_requested]));
  }

  /** Asks the process holding the session to close it; false if no live session has that id. */
  async requestClose(sessionId: string): Promise<boolean> {
    const res = await this.pool.query(`UPDATE session_presence SET close_requested = 'operator' WHERE session_id = $1::uuid`, [sessionId]);
    return (res.rowCount ?? 0) > 0;
  }

  async release(sessionId: string): Promise<void> {
    await this.pool.query('DELETE FROM session_presence WHERE session_id = $1::uuid', [sessionId]);
  }

  async releaseProcess(processId: string): Promise<void> {
    await this.pool.query('DELETE FROM session_presence WHERE process_id = $1', [processId]);
  }

  /** Live sessions of every process whose heartbeat is fresher than `staleMs`. */
  async list(staleMs: number): Promise<PresenceRow[]> {
    const res = await this.pool.query<Record<string, unknown>>(
      `SELECT session_id, senior_id, process_id, state, current_flux, turn_count, last_latency_ms, last_flux, connected_since, heartbeat_at
         FROM session_presence WHERE heartbeat_at >= now() - make_interval(secs => $1::float8 / 1000) ORDER BY connected_since`,
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

import type pg from 'pg';

export interface ErasureNotice {
  id: string;
  seniorId: string;
  /** The process that erased. */
  processId: string;
}

const interval = (param: string) => `make_interval(secs => ${param}::float8 / 1000)`;

/**
 * `erasure_notices`: an erasure made through one runtime process, read by the others sharing the
 * database, which close the senior's session and purge their in-memory caches. Ids only, kept
 * `retainMs`. A table rather than a signal (`PgSignals`): a notification is lost for a process whose
 * listener is reconnecting at that moment, a notice is still there at its next poll or heartbeat.
 */
export class PgErasureNoticesRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * Tells the other live processes (a heartbeat fresher than `staleMs`) that the senior is being
   * erased, and prunes the notices older than `retainMs`; false, with nothing written, when no
   * other process is live.
   */
  async publish(seniorId: string, processId: string, staleMs: number, retainMs: number): Promise<boolean> {
    const res = await this.pool.query(
      `WITH pruned AS (DELETE FROM erasure_notices WHERE erased_at < now() - ${interval('$4')})
       INSERT INTO erasure_notices (erased_senior, process_id)
       SELECT $1::uuid, $2 WHERE EXISTS (
         SELECT 1 FROM presence_processes WHERE process_id <> $2 AND heartbeat_at >= now() - ${interval('$3')})`,
      [seniorId, processId, staleMs, retainMs],
    );
    return (res.rowCount ?? 0) > 0;
  }

  /** Notices of the last `retainMs` from other processes than `processId`; with `prune`, older ones are deleted first. */
  async recent(processId: string, retainMs: number, prune = false): Promise<ErasureNotice[]> {
    const select = `SELECT id::text, erased_senior::text, process_id FROM erasure_notices WHERE process_id <> $1 AND erased_at >= now() - ${interval('$2')}`;
    const res = await this.pool.query<{ id: string; erased_senior: string; process_id: string }>(
      prune ? `WITH pruned AS (DELETE FROM erasure_notices WHERE erased_at < now() - ${interval('$2')}) ${select}` : select,
      [processId, retainMs],
    );
    return res.rows.map((r) => ({ id: r.id, seniorId: r.erased_senior, processId: r.process_id }));
  }
}

import type pg from 'pg';
import { SENIOR_LOCK_SQL } from './pg-presence.repository.ts';
import { inTransaction } from './transaction.ts';

/** Tables erased last, in this order: everything else references them. */
const ROOT_TABLES = ['devices', 'seniors'];

/**
 * Every table of the schema that has a `senior_id` column — found in `information_schema`, so a
 * table added later is covered without touching this code — in the order they can be deleted in
 * (`devices` last). The one list erasure deletes from and the export reads (`PgSeniorExportRepository`).
 */
export async function seniorTables(pool: Pick<pg.Pool, 'query'>): Promise<string[]> {
  const tables = await pool.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'senior_id' ORDER BY table_name`,
  );
  return [...tables.rows.map((r) => r.table_name).filter((t) => !ROOT_TABLES.includes(t)), 'devices'];
}

/**
 * The database side of one senior's RGPD erasure: every table of `seniorTables`, then the senior
 * row, in one transaction.
 */
export class PgErasureRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * The fence, the erasure's first step: marks the senior's row as being erased under the senior's
   * advisory lock, which a presence claim takes too. Once it has committed, no session of the senior
   * starts in any process sharing the database (the claim refuses), and every claim committed before
   * it has its row in `session_presence`. The sweep deletes the row, fence included.
   */
  async fence(seniorId: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await client.query(SENIOR_LOCK_SQL, [seniorId]);
      await client.query('UPDATE seniors SET erasing_since = COALESCE(erasing_since, now()) WHERE id = $1::uuid', [seniorId]);
    });
  }

  /** Rows deleted per table (`seniors` included); zero counts when the senior is already gone. */
  async eraseSenior(seniorId: string): Promise<Record<string, number>> {
    const ordered = await seniorTables(this.pool);
    const counts: Record<string, number> = {};
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const table of ordered) {
        const res = await client.query(`DELETE FROM "${table}" WHERE senior_id = $1::uuid`, [seniorId]);
        counts[table] = res.rowCount ?? 0;
      }
      const senior = await client.query('DELETE FROM seniors WHERE id = $1::uuid', [seniorId]);
      counts.seniors = senior.rowCount ?? 0;
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    return counts;
  }
}

import type pg from 'pg';
import { seniorTables } from './pg-erasure.repository.ts';

/** What a purge did: the tables rewritten, and whether the write-ahead log was switched and checkpointed. */
export interface PurgeReport {
  tables: number;
  /** `not_permitted`: the database's user may not run pg_switch_wal() or CHECKPOINT (a server's operator must). */
  wal: 'purged' | 'not_permitted';
}

/** PostgreSQL's "insufficient privilege". */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Makes erased rows unreadable on disk. A DELETE leaves the row's bytes in its heap page, and plain
 * VACUUM only marks the space free (the bytes stay in the page's hole: 8 of 200 erased rows were
 * still readable after VACUUM and CHECKPOINT, measured on PGlite); VACUUM FULL writes each table (its
 * TOAST and indexes) anew and drops the old files. The inserts' records, and the deletes' full-page
 * images, are in the write-ahead log: a segment switch, then a CHECKPOINT, retire every segment that
 * holds them (removed, not recycled, when `wal_recycle` is off, as the embedded database runs).
 */
export class PgErasurePurgeRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async purge(): Promise<PurgeReport> {
    // Every table erasure deletes from, and the senior rows: ids come from the catalogue, never from input.
    const tables = [...(await seniorTables(this.pool)), 'seniors'];
    for (const table of tables) await this.pool.query(`VACUUM (FULL) "${table}"`);
    try {
      await this.pool.query('SELECT pg_switch_wal()');
      await this.pool.query('CHECKPOINT');
    } catch (err) {
      if ((err as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw err;
      return { tables: tables.length, wal: 'not_permitted' };
    }
    return { tables: tables.length, wal: 'purged' };
  }
}

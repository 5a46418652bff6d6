import type pg from 'pg';
import { seniorTables } from './pg-erasure.repository.ts';
import { inTransaction } from './transaction.ts';

/** Columns left out of an export, by why; the export names each one it left out, table by table. */
const isLeftOut = (column: { column_name: string; udt_name: string }) =>
  // A vector is computed from the text exported beside it (1024 numbers a row, meaningless alone);
  // a device token's hash is a credential of the kiosk, not data about the senior.
  column.udt_name === 'vector' || column.column_name === 'token_hash';

export interface SeniorExport {
  /** The senior's own row, or null when there is no such senior. */
  senior: Record<string, unknown> | null;
  /** Every row of every table erasure deletes from, by table (an empty list for a table holding none). */
  tables: Record<string, Array<Record<string, unknown>>>;
  /** The columns left out, by table (see `isLeftOut`). */
  omitted: Record<string, string[]>;
}

/**
 * RGPD access and portability (art. 15 and 20): every row the database holds for one senior —
 * the tables erasure deletes from (`seniorTables`, the same list, so the two cannot drift) and
 * the senior row — read in one snapshot, as JSON values.
 */
export class PgSeniorExportRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async export(seniorId: string): Promise<SeniorExport> {
    // One snapshot: a session closing meanwhile cannot leave half its rows in the document.
    return inTransaction(
      this.pool,
      async (client) => {
        const senior = await client.query<{ row: Record<string, unknown> }>('SELECT to_jsonb(s) AS row FROM seniors s WHERE id = $1::uuid', [seniorId]);
        const tables = await seniorTables(client);
        const columns = await client.query<{ table_name: string; column_name: string; udt_name: string }>(
          `SELECT table_name, column_name, udt_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`,
          [tables],
        );
        const out: SeniorExport = { senior: senior.rows[0]?.row ?? null, tables: {}, omitted: {} };
        for (const table of tables) {
          const left = columns.rows.filter((c) => c.table_name === table && isLeftOut(c)).map((c) => c.column_name);
          if (left.length > 0) out.omitted[table] = left;
          // `table` comes from the catalogue, never from a request.
          const rows = await client.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(t) - $2::text[] AS row FROM "${table}" t WHERE senior_id = $1::uuid`, [seniorId, left]);
          out.tables[table] = rows.rows.map((r) => r.row);
        }
        return out;
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }
}

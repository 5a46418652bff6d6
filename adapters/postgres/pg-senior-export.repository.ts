import type pg from 'pg';
import { seniorTables } from './pg-erasure.repository.ts';
import { consentSections, type ConsentSection } from './senior-export-consents.ts';

/** Columns left out of an export, by why; the export names each one it left out, table by table. */
const isLeftOut = (column: { column_name: string; udt_name: string }) =>
  // A vector is computed from the text exported beside it (1024 numbers a row, meaningless alone);
  // a device token's hash is a credential of the kiosk, not data about the senior.
  column.udt_name === 'vector' || column.column_name === 'token_hash';

/** One table of an export: its name, the columns left out, and the primary key it is paged on. */
export interface ExportTable {
  name: string;
  leftOut: string[];
  /** Primary key columns, in index order, with their SQL types (a cursor's text is cast back to them). */
  key: Array<{ column: string; type: string }>;
}

/** What an export is made of, read before its first byte is written: all small. */
export interface ExportPlan {
  /** The senior's own row as JSON text. */
  senior: string;
  tables: ExportTable[];
  /** What the export holds under which consent, and whether that consent is granted now. */
  consents: ConsentSection[];
}

/** A batch of rows as JSON text (never parsed here: the export writes them as the database spelled them). */
export interface ExportBatch {
  rows: string[];
  /** The last row's key, as text: where the next batch starts. */
  last: string[];
}

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/**
 * RGPD access and portability (art. 15 and 20): every row the database holds for one senior —
 * the tables erasure deletes from (`seniorTables`, the same list, so the two cannot drift) and
 * the senior row — as JSON text, a table at a time in keyset batches on its primary key.
 * Each batch is its own short statement: on embedded PGlite an open transaction holds the one
 * database session every kiosk's turn needs, so no snapshot is held across batches.
 */
export class PgSeniorExportRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Null when there is no such senior. */
  async plan(seniorId: string): Promise<ExportPlan | null> {
    const senior = await this.pool.query<{ row: string }>('SELECT to_jsonb(s)::text AS row FROM seniors s WHERE id = $1::uuid', [seniorId]);
    if (!senior.rows[0]) return null;
    const names = await seniorTables(this.pool);
    const columns = await this.pool.query<{ table_name: string; column_name: string; udt_name: string }>(
      `SELECT table_name, column_name, udt_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`,
      [names],
    );
    const keys = await this.pool.query<{ table_name: string; column_name: string; type: string }>(
      `SELECT c.relname AS table_name, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_index i
         JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
        WHERE i.indisprimary AND n.nspname = current_schema() AND c.relname = ANY($1::text[])
        ORDER BY c.relname, k.ord`,
      [names],
    );
    const tables = names.map((name) => {
      const key = keys.rows.filter((k) => k.table_name === name).map((k) => ({ column: k.column_name, type: k.type }));
      // Keyset paging needs a unique order; every table of a senior has a primary key (a migration adding one without would be stopped here, loudly).
      if (key.length === 0) throw new Error(`table ${name} has no primary key: the export cannot page it`);
      return { name, leftOut: columns.rows.filter((c) => c.table_name === name && isLeftOut(c)).map((c) => c.column_name), key };
    });
    const consents = await this.pool.query<{ category: string; granted_at: Date; revoked_at: Date | null }>(
      'SELECT category, granted_at, revoked_at FROM consents WHERE senior_id = $1::uuid',
      [seniorId],
    );
    return { senior: senior.rows[0].row, tables, consents: consentSections(names, consents.rows) };
  }

  /** The senior's rows of `table` after `after` (from the first when null), at most `limit`, in key order. */
  async batch(seniorId: string, table: ExportTable, after: string[] | null, limit: number): Promise<ExportBatch> {
    const columns = table.key.map((k) => `t.${quoted(k.column)}`);
    const cursor = table.key.map((k, i) => `($4::text[])[${i + 1}]::${k.type}`);
    // `table` and its key come from the catalogue, never from a request.
    const res = await this.pool.query<{ row: string; key: string[] }>(
      `SELECT (to_jsonb(t) - $2::text[])::text AS row, ARRAY[${columns.map((c) => `${c}::text`).join(', ')}] AS key
         FROM ${quoted(table.name)} t
        WHERE t.senior_id = $1::uuid ${after ? `AND (${columns.join(', ')}) > (${cursor.join(', ')})` : ''}
        ORDER BY ${columns.join(', ')}
        LIMIT $3`,
      after ? [seniorId, table.leftOut, limit, after] : [seniorId, table.leftOut, limit],
    );
    return { rows: res.rows.map((r) => r.row), last: res.rows.at(-1)?.key ?? [] };
  }
}

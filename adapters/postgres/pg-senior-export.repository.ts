import type pg from 'pg';
import { seniorTables } from './pg-erasure.repository.ts';
import { consentSections, type ConsentSection } from './senior-export-consents.ts';

/** Columns left out of an export, by why; the export names each one it left out, table by table. */
const isLeftOut = (column: { column_name: string; udt_name: string }) =>
  // A vector is computed from the text exported beside it (1024 numbers a row, meaningless alone);
  // a device token's hash is a credential of the kiosk, not data about the senior.
  column.udt_name === 'vector' || column.column_name === 'token_hash';

/** A column with its SQL type (a cursor's text is cast back to it). */
interface TypedColumn {
  column: string;
  type: string;
}

/** One table of an export: its name, the columns left out, and how it is paged. */
export interface ExportTable {
  name: string;
  leftOut: string[];
  /** The primary key: what a batch's rows are fetched by. */
  primary: TypedColumn[];
  /** The order the table is paged in: unique (it holds the primary key), and an index's after senior_id when there is one. */
  key: TypedColumn[];
}

/**
 * How a table is paged: in the order of a btree index that starts with senior_id and holds the whole
 * primary key (the senior's rows then come in index order, a batch costs what it returns), else in
 * primary key order. A table without a primary key cannot be paged without skipping or repeating rows.
 */
function pagingOf(table: string, indexes: ReadonlyArray<{ primary: boolean; columns: string[]; types: string[] }>): Pick<ExportTable, 'primary' | 'key'> {
  const typed = (ix: { columns: string[]; types: string[] }) => ix.columns.map((column, i) => ({ column, type: ix.types[i]! }));
  const pk = indexes.find((ix) => ix.primary);
  if (!pk) throw new Error(`table ${table} has no primary key: the export cannot page it`);
  const bySenior = indexes.find((ix) => ix.columns[0] === 'senior_id' && ix.columns.length > 1 && pk.columns.every((c) => ix.columns.includes(c)));
  return { primary: typed(pk), key: bySenior ? typed(bySenior).slice(1) : typed(pk) };
}

/** What an export is made of beside the rows, read after the senior's row is written: all small. */
export interface ExportPlan {
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

  /** The senior's own row as JSON text, or null when there is no such senior: the export's first bytes. */
  async senior(seniorId: string): Promise<string | null> {
    const senior = await this.pool.query<{ row: string }>('SELECT to_jsonb(s)::text AS row FROM seniors s WHERE id = $1::uuid', [seniorId]);
    return senior.rows[0]?.row ?? null;
  }

  /** The tables to export and how to page them (from the catalogue), and the senior's consents. */
  async plan(seniorId: string): Promise<ExportPlan> {
    const names = await seniorTables(this.pool);
    const columns = await this.pool.query<{ table_name: string; column_name: string; udt_name: string }>(
      `SELECT table_name, column_name, udt_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`,
      [names],
    );
    const indexes = await this.pool.query<{ table_name: string; primary: boolean; columns: string[]; types: string[] }>(
      `SELECT c.relname AS table_name, i.indisprimary AS primary,
              array_agg(a.attname::text ORDER BY k.ord) AS columns, array_agg(format_type(a.atttypid, a.atttypmod) ORDER BY k.ord) AS types
         FROM pg_index i
         JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_am am ON am.oid = ic.relam AND am.amname = 'btree'
         CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
        WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[]) AND i.indpred IS NULL AND i.indexprs IS NULL
        GROUP BY c.relname, i.indexrelid, i.indisprimary
        ORDER BY c.relname, i.indisprimary DESC, i.indexrelid`,
      [names],
    );
    const tables = names.map((name) => ({
      name,
      leftOut: columns.rows.filter((c) => c.table_name === name && isLeftOut(c)).map((c) => c.column_name),
      ...pagingOf(name, indexes.rows.filter((ix) => ix.table_name === name)),
    }));
    const consents = await this.pool.query<{ category: string; granted_at: Date; revoked_at: Date | null }>(
      'SELECT category, granted_at, revoked_at FROM consents WHERE senior_id = $1::uuid',
      [seniorId],
    );
    return { tables, consents: consentSections(names, consents.rows) };
  }

  /** The senior's rows of `table` after `after` (from the first when null), at most `limit`, in key order. */
  async batch(seniorId: string, table: ExportTable, after: string[] | null, limit: number): Promise<ExportBatch> {
    const list = (alias: string, cols: TypedColumn[]) => cols.map((k) => `${alias}.${quoted(k.column)}`).join(', ');
    const cursor = table.key.map((k, i) => `($4::text[])[${i + 1}]::${k.type}`).join(', ');
    // The page is chosen on its keys alone, then only its rows are turned into JSON: a plan that sorts
    // the senior's remaining rows sorts keys, never documents. `table` and its columns come from the
    // catalogue, never from a request.
    const res = await this.pool.query<{ row: string; key: string[] }>(
      `SELECT (to_jsonb(t) - $2::text[])::text AS row, ARRAY[${table.key.map((k) => `t.${quoted(k.column)}::text`).join(', ')}] AS key
         FROM ${quoted(table.name)} t
        WHERE t.senior_id = $1::uuid
          AND (${list('t', table.primary)}) IN (
            SELECT ${list('p', table.primary)} FROM ${quoted(table.name)} p
             WHERE p.senior_id = $1::uuid ${after ? `AND (${list('p', table.key)}) > (${cursor})` : ''}
             ORDER BY ${list('p', table.key)} LIMIT $3)
        ORDER BY ${list('t', table.key)}`,
      after ? [seniorId, table.leftOut, limit, after] : [seniorId, table.leftOut, limit],
    );
    return { rows: res.rows.map((r) => r.row), last: res.rows.at(-1)?.key ?? [] };
  }
}

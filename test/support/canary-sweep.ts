import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Database } from '../../runtime/db/database.ts';

/** Every text-like column of every table (pg-boss's included, once it exists). */
async function textColumns(pool: Database['pool']) {
  const cols = await pool.query<{ table_schema: string; table_name: string; column_name: string }>(
    `SELECT table_schema, table_name, column_name FROM information_schema.columns
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
        AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED', 'bytea')`,
  );
  return cols.rows;
}

/** Every text-like value of every table, as one string (a search that must see what SQL's LIKE cannot: folded text). */
export async function everyStoredText(pool: Database['pool']): Promise<string> {
  const values: string[] = [];
  for (const c of await textColumns(pool)) {
    const rows = await pool.query<{ v: string | null }>(`SELECT "${c.column_name}"::text AS v FROM "${c.table_schema}"."${c.table_name}"`);
    for (const r of rows.rows) if (r.v !== null) values.push(r.v);
  }
  return values.join('\n');
}

/** Every text-like column of every table (pg-boss's included, once it exists), searched for a needle. */
export async function tablesContaining(pool: Database['pool'], needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const c of await textColumns(pool)) {
    const q = `SELECT count(*)::int AS n FROM "${c.table_schema}"."${c.table_name}" WHERE "${c.column_name}"::text LIKE $1`;
    if ((await pool.query<{ n: number }>(q, [`%${needle}%`])).rows[0]!.n > 0) hits.push(`${c.table_schema}.${c.table_name}.${c.column_name}`);
  }
  return hits;
}

/** Every regular file under `dir` (recursively). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** The files under `dir` whose bytes or path contain the needle. */
export async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const file of await filesUnder(dir)) if (file.includes(needle) || (await readFile(file)).includes(needle)) hits.push(file);
  return hits;
}

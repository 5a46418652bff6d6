import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type pg from 'pg';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));
const TABLE = 'pgmigrations';
const CHECKSUMS = 'pgmigrations_checksums';

export class MigrationChecksumError extends Error {
  constructor(name: string) {
    super(`migration ${name} was changed after it was applied; add a new migration instead of editing an applied one`);
    this.name = 'MigrationChecksumError';
  }
}

async function fileChecksums(dir: string): Promise<Map<string, string>> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const sums = new Map<string, string>();
  for (const file of files) {
    const body = await readFile(path.join(dir, file));
    sums.set(path.basename(file, '.sql'), createHash('sha256').update(body).digest('hex'));
  }
  return sums;
}

/**
 * Applies pending `.sql` migrations in order (node-pg-migrate: advisory lock, one
 * transaction for the batch, so a failing one leaves the database as it was).
 * On top, each applied file's sha256 is recorded and checked at every start, so an
 * edited migration stops start-up instead of silently diverging between databases.
 */
export async function migrate(pool: pg.Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const sums = await fileChecksums(dir);
  const client = await pool.connect();
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS ${CHECKSUMS} (name text PRIMARY KEY, sha256 text NOT NULL)`);
    const recorded = await client.query<{ name: string; sha256: string }>(`SELECT name, sha256 FROM ${CHECKSUMS}`);
    for (const row of recorded.rows) {
      const now = sums.get(row.name);
      if (now !== undefined && now !== row.sha256) throw new MigrationChecksumError(row.name);
    }
    const applied = await runner({
      dbClient: client,
      dir,
      direction: 'up',
      migrationsTable: TABLE,
      checkOrder: true,
      // All pending files in one transaction: node-pg-migrate rolls it back on failure,
      // whereas its per-file mode leaves a shared connection in an aborted transaction.
      singleTransaction: true,
      // Several runtime processes may start at once on one database: the later ones wait.
      advisoryLockMode: 'wait',
      log: () => {},
    });
    const all = await client.query<{ name: string }>(`SELECT name FROM ${TABLE}`);
    for (const { name } of all.rows) {
      const sum = sums.get(name);
      if (sum) await client.query(`INSERT INTO ${CHECKSUMS} (name, sha256) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [name, sum]);
    }
    return applied.map((m) => m.name);
  } finally {
    client.release();
  }
}

/** True when every migration file has been applied (used by `/ready`). */
export async function isMigrated(pool: pg.Pool, dir = MIGRATIONS_DIR): Promise<boolean> {
  const sums = await fileChecksums(dir);
  const exists = await pool.query<{ t: string | null }>(`SELECT to_regclass($1) AS t`, [TABLE]);
  if (!exists.rows[0]?.t) return false;
  const rows = await pool.query<{ name: string }>(`SELECT name FROM ${TABLE}`);
  const applied = new Set(rows.rows.map((r) => r.name));
  return [...sums.keys()].every((n) => applied.has(n));
}

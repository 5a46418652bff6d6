import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../runtime/db/database.ts';
import { isMigrated, migrate, MIGRATIONS_DIR, MigrationChecksumError } from '../../adapters/postgres/migrations.ts';
import { startWirePostgres } from '../support/pglite-server.ts';

let db: Database;
const projectMigrations = async () => (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort().map((f) => f.replace(/\.sql$/, ''));
beforeAll(async () => {
  db = await openDatabase({ pgliteDataDir: 'memory://' });
});
afterAll(() => db.close());

async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kohami-migrations-'));
  for (const [name, body] of Object.entries(files)) await writeFile(path.join(dir, name), body);
  return dir;
}

describe('migrations', () => {
  it('applies the project migrations on PGlite with pgvector, once', async () => {
    expect(await migrate(db.pool)).toEqual(await projectMigrations());
    expect(await projectMigrations()).toContain('001_identity');
    expect(await isMigrated(db.pool)).toBe(true);
    expect(await migrate(db.pool)).toEqual([]);
    const ext = await db.pool.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
    expect(ext.rows[0].extversion).toMatch(/^0\.8/);
  });

  it('records a checksum and refuses to start when an applied migration was edited', async () => {
    const fresh = await openDatabase({ pgliteDataDir: 'memory://' });
    try {
      const dir = await migrationsDir({ '001_a.sql': '-- Up Migration\nCREATE TABLE a (x int);' });
      expect(await migrate(fresh.pool, dir)).toEqual(['001_a']);
      await writeFile(path.join(dir, '001_a.sql'), '-- Up Migration\nCREATE TABLE a (x int, y int);');
      await expect(migrate(fresh.pool, dir)).rejects.toThrow(MigrationChecksumError);
    } finally {
      await fresh.close();
    }
  });

  it('a failing migration leaves the database as it was and reports its error', async () => {
    const dir = await migrationsDir({
      '001_good.sql': '-- Up Migration\nCREATE TABLE m_good (x int);',
      '002_bad.sql': '-- Up Migration\nCREATE TABLE m_half (x int);\nSELECT no_such_function();',
    });
    const fresh = await openDatabase({ pgliteDataDir: 'memory://' });
    try {
      await expect(migrate(fresh.pool, dir)).rejects.toThrow(/no_such_function/);
      const half = await fresh.pool.query("SELECT to_regclass('m_half') AS t, to_regclass('m_good') AS g");
      expect(half.rows[0]).toEqual({ t: null, g: null });
      expect((await fresh.pool.query('SELECT 1 AS ok')).rows[0].ok).toBe(1);
      expect(await isMigrated(fresh.pool, dir)).toBe(false);
    } finally {
      await fresh.close();
    }
  });
});

describe('the pg wire path (DATABASE_URL)', () => {
  it('migrates and queries a Postgres server over TCP with the same code', async () => {
    const server = await startWirePostgres();
    const wire = await openDatabase({ databaseUrl: server.url, pgliteDataDir: 'unused' });
    try {
      expect(wire.engine).toBe('postgres');
      expect(await migrate(wire.pool)).toEqual(await projectMigrations());
      const r = await wire.pool.query("SELECT '[1,0]'::vector <=> '[0,1]'::vector AS d");
      expect(r.rows[0].d).toBe(1);
    } finally {
      await wire.close();
      await server.stop();
    }
  });
});

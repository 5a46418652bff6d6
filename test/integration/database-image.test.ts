import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMigrated, migrate } from '../../adapters/postgres/migrations.ts';
import { openDatabase, type Database } from '../../runtime/db/database.ts';
import { testDatabaseImage } from '../support/database-image.ts';

/** The run's migrated image (test/support/global-setup.ts), as the test runtimes start from it. */
describe('a database started from the migrated image', () => {
  let dir: string;
  const open = new Set<Database>();
  const start = async (pgliteDataDir: string) => {
    const db = await openDatabase({ pgliteDataDir, pgliteImage: testDatabaseImage() });
    open.add(db);
    return db;
  };
  const seniors = async (db: Database) => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM seniors')).rows[0]!.n);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kohami-image-'));
  });
  afterAll(async () => {
    for (const db of open) await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('is migrated before any migration runs here, and migrate() finds none to apply', async () => {
    const db = await start('memory://');
    expect(await isMigrated(db.pool)).toBe(true);
    expect(await migrate(db.pool)).toEqual([]);
    // pgvector's extension came with the image.
    expect((await db.pool.query(`SELECT '[1,2]'::vector(2) <=> '[1,2]'::vector(2) AS d`)).rows[0].d).toBe(0);
  });

  it('is a copy: what one database writes, another started from the same image never sees', async () => {
    const [a, b] = [await start('memory://'), await start('memory://')];
    await a.pool.query(`INSERT INTO seniors (display_name) VALUES ('Jeanne')`);
    expect(await seniors(a)).toBe(1);
    expect(await seniors(b)).toBe(0);
  });

  it('fills a data directory without a cluster; a directory with one resumes it, the image left aside', async () => {
    const dataDir = path.join(dir, 'pglite');
    const first = await start(dataDir);
    expect(await isMigrated(first.pool)).toBe(true);
    await first.pool.query(`INSERT INTO seniors (display_name) VALUES ('Jeanne')`);
    await first.close();
    open.delete(first);
    const again = await start(dataDir);
    expect(await seniors(again)).toBe(1);
  });
});

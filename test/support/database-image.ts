import { cp } from 'node:fs/promises';
import path from 'node:path';
import { inject } from 'vitest';
import pg from 'pg';
import { migrate } from '../../adapters/postgres/migrations.ts';
import { openDatabase } from '../../runtime/db/database.ts';
import { socketClientConfig, startPgliteThread } from '../../runtime/db/pglite-thread.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test run's migrated database image (test/support/global-setup.ts). */
    databaseImage: string;
  }
}

/**
 * Writes a migrated database's image to `file`: a new PGlite database (initdb), every migration, then
 * its cluster as a tar. A test database started from it (`pgliteImage`, the runtime's `databaseImage`)
 * skips initdb and the migrations, the bulk of a start; the migrations themselves are tested from an
 * empty database (test/integration/migrate.test.ts).
 */
export async function writeMigratedImage(file: string): Promise<void> {
  const thread = await startPgliteThread('memory://');
  try {
    const pool = new pg.Pool({ ...socketClientConfig(thread.socket), user: 'postgres', database: 'postgres', max: 1 });
    try {
      await migrate(pool);
      // Every page on disk: the image's copy then starts without replaying the migrations' WAL.
      await pool.query('CHECKPOINT');
    } finally {
      await pool.end();
    }
    await thread.dump(file);
  } finally {
    await thread.close();
  }
}

/** The image this test run made once, before its first test file. */
export function testDatabaseImage(): string {
  return inject('databaseImage');
}

/**
 * `dataDir` (a new or empty directory) holding a copy of the run's migrated image: a runtime process
 * started on it (PGLITE_DATA_DIR) resumes an empty, migrated database — it still seeds the demo data, but
 * skips initdb and the migrations, most of a first start. For tests whose subject is not the first start
 * itself; those start on an empty directory.
 */
export async function migratedDataDir(dataDir: string): Promise<string> {
  await cp(await (template ??= restoredImage(path.join(path.dirname(testDatabaseImage()), `data-dir-${process.pid}`))), dataDir, { recursive: true });
  return dataDir;
}

/**
 * This test process's one data directory restored from the image, as the runtime itself opens one (a
 * few seconds); each `migratedDataDir` copies it (a fraction of one). Beside the image, removed with it.
 */
let template: Promise<string> | undefined;

async function restoredImage(dir: string): Promise<string> {
  const db = await openDatabase({ pgliteDataDir: dir, pgliteImage: testDatabaseImage() });
  await db.close();
  return dir;
}

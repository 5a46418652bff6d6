import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import pg from 'pg';
import { migrate } from '../../adapters/postgres/migrations.ts';
import { socketClientConfig, startPgliteThread } from '../../runtime/db/pglite-thread.ts';

const execFileAsync = promisify(execFile);

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
 * `dataDir` (a new or empty directory) holding the run's migrated image, unpacked as PGlite unpacks it
 * into a new database: a runtime process started on it (PGLITE_DATA_DIR) resumes an empty, migrated
 * database — it still seeds the demo data, but skips initdb and the migrations, most of a first start.
 * The image was dumped from a live cluster after a CHECKPOINT: the first open replays from it, as a
 * database started from the image in memory does. For tests whose subject is not the first start
 * itself; those start on an empty directory.
 */
export async function migratedDataDir(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Its members are named from the cluster's root (`/PG_VERSION`): tar strips the leading slash.
  await execFileAsync('tar', ['--extract', '--file', testDatabaseImage(), '--directory', dataDir]);
  return dataDir;
}

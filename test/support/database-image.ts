import { inject } from 'vitest';
import pg from 'pg';
import { migrate } from '../../adapters/postgres/migrations.ts';
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

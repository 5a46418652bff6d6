import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { mkdir } from 'node:fs/promises';

export interface Database {
  pool: pg.Pool;
  engine: 'pglite' | 'postgres';
  /** Where the data lives, for the start banner (never includes credentials). */
  location: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  pgliteDataDir: string;
}

/** One `pg.Pool` interface over either engine: the rest of the code never knows which. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    const url = new URL(opts.databaseUrl);
    return { pool, engine: 'postgres', location: `${url.hostname}:${url.port || 5432}${url.pathname}`, close: () => pool.end() };
  }
  if (!opts.pgliteDataDir.startsWith('memory://')) await mkdir(opts.pgliteDataDir, { recursive: true });
  const pglite = await PGlite.create({ dataDir: opts.pgliteDataDir, extensions: { vector } });
  const pool = new pg.Pool(createPgConfig(pglite));
  return {
    pool,
    engine: 'pglite',
    location: opts.pgliteDataDir,
    close: async () => {
      await pool.end();
      await pglite.close();
    },
  };
}

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testDatabaseImage } from './database-image.ts';
import { startWirePostgres } from './pglite-server.ts';

export interface SharedDatabase {
  /** A `DATABASE_URL` several runtime processes can share. */
  url: string;
  /** What serves it, for the test's name and its logs. */
  kind: 'postgresql' | 'pglite-wire';
  stop(): Promise<void>;
}

/**
 * The database the multi-process tests share: a throwaway database on the PostgreSQL server of
 * `TEST_DATABASE_URL` when it is set (PostgreSQL ≥ 16 with pgvector ≥ 0.8; the URL's user must be
 * allowed to CREATE DATABASE, and the extension to be created), empty, else the embedded database
 * served over the wire protocol, migrated. Either way the same tests run on it.
 */
export async function sharedDatabase(): Promise<SharedDatabase> {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) {
    // Migrated already: PGlite is one session, whatever the connections, so the advisory lock that makes
    // runtime processes started at once migrate one after the other on PostgreSQL excludes nothing here,
    // and two first migrations would collide (« relation "seniors" already exists »).
    const wire = await startWirePostgres({ image: testDatabaseImage() });
    return { url: wire.url, kind: 'pglite-wire', stop: () => wire.stop() };
  }
  const name = `kohami_test_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    kind: 'postgresql',
    // FORCE: a killed runtime's connections may still be open on the server.
    stop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

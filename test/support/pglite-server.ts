import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** A PGlite database served over the Postgres wire protocol on loopback: the `DATABASE_URL` path, for real. */
export async function startWirePostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const db = await PGlite.create({ dataDir: 'memory://', extensions: { vector } });
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 20 });
  await server.start();
  const conn = server.getServerConn();
  return {
    url: `postgres://postgres:postgres@${conn}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

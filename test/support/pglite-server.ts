import { socketClientConfig, startPgliteThread } from '../../runtime/db/pglite-thread.ts';

/**
 * A PGlite database served over the Postgres wire protocol: the `DATABASE_URL` path, for real. It is
 * the runtime's own server (`runtime/db/pglite-worker.js`), which gives the one PGlite session to one
 * connection per whole exchange, so several clients (two runtimes) can share it safely. It listens on
 * a Unix socket in a private directory, as the embedded database does: the URL names that directory.
 * `image`: it starts from that migrated database image instead of empty.
 */
export async function startWirePostgres(opts: { image?: string } = {}): Promise<{ url: string; socket: string; stop(): Promise<void> }> {
  const thread = await startPgliteThread('memory://', { image: opts.image });
  const { host, port } = socketClientConfig(thread.socket);
  return {
    url: `postgres://postgres@localhost:${port}/postgres?host=${encodeURIComponent(host)}`,
    socket: thread.socket,
    stop: () => thread.close(),
  };
}

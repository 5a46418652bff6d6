import { Worker } from 'node:worker_threads';

/**
 * A PGlite database served over the Postgres wire protocol on loopback: the `DATABASE_URL` path, for
 * real. It is the runtime's own server (`runtime/db/pglite-worker.js`), which gives the one PGlite session
 * to one connection per whole exchange, so several clients (two runtimes) can share it safely.
 */
export async function startWirePostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const worker = new Worker(new URL('../../runtime/db/pglite-worker.js', import.meta.url), { workerData: { dataDir: 'memory://' } });
  const address = await new Promise<string>((resolve, reject) => {
    worker.once('message', (msg: { address: string }) => resolve(msg.address));
    worker.once('error', reject);
  });
  return {
    url: `postgres://postgres:postgres@${address}/postgres`,
    stop: async () => {
      const closed = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage({ type: 'close' });
      await closed;
      await worker.terminate();
    },
  };
}

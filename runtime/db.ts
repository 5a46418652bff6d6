import { mkdir } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import pg from 'pg';

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
  /** Told if the embedded database's thread dies after start (the pool then fails every query). */
  onFatal?: (err: Error) => void;
}

/** One `pg.Pool` interface over either engine: the rest of the code never knows which. */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    const url = new URL(opts.databaseUrl);
    return { pool, engine: 'postgres', location: `${url.hostname}:${url.port || 5432}${url.pathname}`, close: () => pool.end() };
  }
  return openEmbedded(opts);
}

/**
 * Embedded PGlite runs in a worker thread behind the Postgres wire protocol on loopback
 * (`pglite-worker.js`): the same `pg` path as a server, and no query ever blocks the event
 * loop that answers kiosks. One connection, as PGlite is one session: pglite-socket queues
 * wire messages, so a second connection is only safe while it never interleaves with an
 * open extended-protocol exchange; the single pooled connection rules that out.
 */
async function openEmbedded(opts: DatabaseOptions): Promise<Database> {
  if (!opts.pgliteDataDir.startsWith('memory://')) await mkdir(opts.pgliteDataDir, { recursive: true });
  const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData: { dataDir: opts.pgliteDataDir } });
  const address = await new Promise<string>((resolve, reject) => {
    worker.once('message', (msg: { type: string; address: string }) => resolve(msg.address));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`embedded database thread exited with code ${code} while starting`)));
  });
  worker.removeAllListeners('error').removeAllListeners('exit');
  worker.on('error', (err) => opts.onFatal?.(err));
  const [host, port] = address.split(':');
  const pool = new pg.Pool({ host, port: Number(port), user: 'postgres', password: 'postgres', database: 'postgres', max: 1 });
  return {
    pool,
    engine: 'pglite',
    location: opts.pgliteDataDir,
    close: async () => {
      await pool.end();
      const closed = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage({ type: 'close' });
      await closed;
      await worker.terminate();
    },
  };
}

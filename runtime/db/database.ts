import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { DataDirLockedError, lockDataDir, type LockRecord } from './data-dir-lock.ts';
import { isMigrated, migrate } from '../../adapters/postgres/migrations.ts';
import { ping } from '../../adapters/postgres/ping.ts';

export interface Database {
  pool: pg.Pool;
  engine: 'pglite' | 'postgres';
  /** Where the data lives, for the start banner (never includes credentials). */
  location: string;
  /** The embedded database's thread, when this process runs it. */
  thread?: Worker;
  /** The live runtime this command reaches the embedded database through. */
  via?: LockRecord;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  pgliteDataDir: string;
  /** Told if the embedded database's thread dies after start (the pool then fails every query). */
  onFatal?: (err: Error) => void;
  /** How long a connection may keep the embedded session in an open transaction while sending nothing (default 10 s). */
  idleOwnerMs?: number;
}

/** How long a command waits for a starting runtime to serve its database, fully migrated. */
const RUNTIME_START_WAIT_MS = 30_000;
const POLL_MS = 200;

/**
 * The runtime's database: one `pg.Pool` interface over either engine, so the rest of the code
 * never knows which. Embedded PGlite belongs to this process alone (`kohami.lock` in its
 * directory), and is served to the commands run meanwhile.
 */
export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) return openServer(opts.databaseUrl);
  return openEmbedded(opts, 'kohami-runtime', true);
}

/**
 * A command's database (`npm run cli`, `dream`, `memory:reembed`), migrated. With embedded
 * PGlite and a runtime up on the directory, the command goes through that runtime's database
 * (waiting for it to finish starting) and leaves migrations to it; with no runtime, the command
 * owns the directory for its run, and a runtime started meanwhile refuses to start.
 */
export async function openCommandDatabase(opts: DatabaseOptions, command: string): Promise<Database> {
  const deadline = Date.now() + RUNTIME_START_WAIT_MS;
  const db = opts.databaseUrl ? await openServer(opts.databaseUrl) : await openEmbeddedOrThrough(opts, command, deadline);
  try {
    if (db.via) await awaitMigrated(db.pool, db.via, deadline);
    else await migrate(db.pool);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/**
 * The longest a query waits for a connection (all in use, or a new one not completing): without a
 * bound a stuck database or a leaked client leaves every caller waiting forever. Far above any wait
 * seen under load (bench:load: 0 ms with 16 connections at 2,000 sessions); the turn's own budgets
 * answer the senior long before it.
 */
export const POOL_WAIT_MS = 30_000;

function openServer(databaseUrl: string): Database {
  const pool = withDropHandler(new pg.Pool({ connectionString: databaseUrl, max: 10, connectionTimeoutMillis: POOL_WAIT_MS }));
  const url = new URL(databaseUrl);
  return { pool, engine: 'postgres', location: `${url.hostname}:${url.port || 5432}${url.pathname}`, close: () => pool.end() };
}

/**
 * A connection that drops (server gone, embedded thread dead, cut while idle in a transaction)
 * fails its own queries; as an 'error' event with no listener it would crash the process.
 * The pool discards an idle one; a checked-out one fails its next query.
 */
function withDropHandler(pool: pg.Pool): pg.Pool {
  return pool.on('error', () => {}).on('connect', (client) => client.on('error', () => {}));
}

/**
 * A pool on the embedded database's wire server. The worker runs one exchange (or transaction)
 * at a time whatever the number of connections; several let the next query's bytes cross the
 * thread and loopback hop while the current one runs, instead of after it.
 */
function wirePool(address: string, max: number): pg.Pool {
  const [host, port] = address.split(':');
  return withDropHandler(new pg.Pool({ host, port: Number(port), user: 'postgres', password: 'postgres', database: 'postgres', max, connectionTimeoutMillis: POOL_WAIT_MS }));
}

/**
 * The runtime's own connections to its embedded database (a command through it needs one). Each
 * connection carries one query per round trip through this event loop: with 4, a busy loop (an
 * agent turn makes two queries) let callers queue for a connection for seconds and never catch up
 * (bench:load, 2,000 sessions: pool wait p50 1.1 s, 19 SOS; with 16: 0 ms, 0 SOS). The worker still
 * runs one exchange at a time; the others wait there, their bytes already across.
 */
const EMBEDDED_POOL_SIZE = 16;

async function openEmbeddedOrThrough(opts: DatabaseOptions, command: string, deadline: number): Promise<Database> {
  for (;;) {
    try {
      return await openEmbedded(opts, command, false);
    } catch (err) {
      if (!(err instanceof DataDirLockedError) || err.otherHost || !err.holder.serves) throw err;
      if (err.holder.address) return through(err.dir, err.holder);
      const { holder, pid } = err.holder;
      if (Date.now() > deadline) throw new Error(`PGLITE_DATA_DIR ${err.dir} belongs to ${holder} (pid ${pid}), which has not served its database within ${RUNTIME_START_WAIT_MS / 1000} s; run this again once it is up`);
      await sleep(POLL_MS);
    }
  }
}

/** The live runtime's database, over the wire: its worker serializes whole exchanges and transactions per connection. */
async function through(dir: string, runtime: LockRecord): Promise<Database> {
  const pool = wirePool(runtime.address!, 1);
  try {
    await ping(pool);
  } catch (err) {
    await pool.end();
    throw new Error(`PGLITE_DATA_DIR ${dir} belongs to ${runtime.holder} (pid ${runtime.pid}), whose database does not answer at ${runtime.address} (${(err as Error).message}): restart it`);
  }
  return { pool, engine: 'pglite', location: `${dir}, through ${runtime.holder} pid ${runtime.pid}`, via: runtime, close: () => pool.end() };
}

/** A command never migrates a database a runtime owns: it waits for the runtime's own migration at start. */
async function awaitMigrated(pool: pg.Pool, runtime: LockRecord, deadline: number): Promise<void> {
  while (!(await isMigrated(pool))) {
    if (Date.now() > deadline) {
      throw new Error(`${runtime.holder} (pid ${runtime.pid}) runs without this version's migrations: restart it with this version, then run this again`);
    }
    await sleep(POLL_MS);
  }
}

/**
 * Embedded PGlite runs in a worker thread behind the Postgres wire protocol on loopback
 * (`pglite-worker.js`): the same `pg` path as a server, and no query ever blocks the event
 * loop that answers kiosks. The worker gives its one PGlite session to one connection at a
 * time, a whole exchange or transaction each.
 */
async function openEmbedded(opts: DatabaseOptions, holder: string, serves: boolean): Promise<Database> {
  const dir = opts.pgliteDataDir;
  const memory = dir.startsWith('memory://');
  if (!memory) await mkdir(dir, { recursive: true });
  // Before PGlite opens the files: a second PGlite on them would silently drop one side's writes.
  const lock = memory ? null : await lockDataDir(path.resolve(dir), holder, serves);
  const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData: { dataDir: dir, idleOwnerMs: opts.idleOwnerMs } });
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  let address: string;
  try {
    address = await Promise.race([
      new Promise<string>((resolve) => worker.once('message', (msg: { address: string }) => resolve(msg.address))),
      new Promise<never>((_resolve, reject) => worker.once('error', reject)),
      exited.then((code) => Promise.reject(new Error(`embedded database thread exited with code ${code} while starting`))),
    ]);
    if (serves) await lock?.publish(address);
  } catch (err) {
    await worker.terminate();
    await lock?.release();
    throw err;
  }
  let closing = false;
  let dead = false;
  const died = (err: Error) => {
    if (closing || dead) return;
    dead = true;
    opts.onFatal?.(err);
  };
  worker.on('error', died);
  // The code shows in logs, whose error serializer keeps no message.
  void exited.then((code) => died(Object.assign(new Error(`the embedded database thread exited with code ${code}`), { code: 'ERR_DATABASE_THREAD_EXITED' })));
  const pool = wirePool(address, EMBEDDED_POOL_SIZE);
  return {
    pool,
    engine: 'pglite',
    location: dir,
    thread: worker,
    close: async () => {
      closing = true;
      await pool.end();
      if (!dead) {
        const closed = new Promise((resolve) => worker.once('message', resolve));
        worker.postMessage({ type: 'close' });
        await Promise.race([closed, exited]);
      }
      await worker.terminate();
      await lock?.release();
    },
  };
}

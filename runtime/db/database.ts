import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import pg from 'pg';
import { DataDirLockedError, lockDataDir, type LockRecord } from './data-dir-lock.ts';
import { isMigrated, migrate } from '../../adapters/postgres/migrations.ts';
import { ping } from '../../adapters/postgres/ping.ts';
import { dataDirSocket, privateDataDir, socketClientConfig, startPgliteThread } from './pglite-thread.ts';

export interface Database {
  pool: pg.Pool;
  engine: 'pglite' | 'postgres';
  /** Where the data lives, for the start banner (never includes credentials). */
  location: string;
  /** The embedded database's thread, when this process runs it. */
  thread?: Worker;
  /** The live runtime this command reaches the embedded database through. */
  via?: LockRecord;
  /** Why this process's database can never answer again (its embedded thread is dead), or null: a liveness probe's question. */
  failure(): string | null;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  pgliteDataDir: string;
  /** Embedded PGlite's shared_buffers (default PGLITE_SHARED_BUFFERS_MB). */
  pgliteSharedBuffersMb?: number;
  /** Told if the embedded database's thread dies after start (the pool then fails every query). */
  onFatal?: (err: Error) => void;
  /** A new embedded database (`memory://`, or a directory without a cluster yet) starts as a copy of this image (a test run's migrated database), not from initdb. */
  pgliteImage?: string | undefined;
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
  // `?host=/dir`: the server's Unix socket directory, which `pg` uses instead of the URL's host.
  const host = url.searchParams.get('host') ?? url.hostname;
  // A server that is down may come back: readiness, not liveness.
  return { pool, engine: 'postgres', location: `${host}:${url.port || 5432}${url.pathname}`, failure: () => null, close: () => pool.end() };
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
 * A pool on the embedded database's wire server, over its Unix socket. The worker runs one exchange
 * (or transaction) at a time whatever the number of connections; several let the next query's bytes
 * cross the thread and socket hop while the current one runs, instead of after it.
 */
function wirePool(socket: string, max: number): pg.Pool {
  return withDropHandler(new pg.Pool({ ...socketClientConfig(socket), user: 'postgres', database: 'postgres', max, connectionTimeoutMillis: POOL_WAIT_MS }));
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
      if (err.holder.socket) return through(err.dir, err.holder);
      const { holder, pid } = err.holder;
      if (err.holder.address) throw new Error(`PGLITE_DATA_DIR ${err.dir} belongs to ${holder} (pid ${pid}), an older version that serves its database on TCP: restart it with this version, then run this again`);
      if (Date.now() > deadline) throw new Error(`PGLITE_DATA_DIR ${err.dir} belongs to ${holder} (pid ${pid}), which has not served its database within ${RUNTIME_START_WAIT_MS / 1000} s; run this again once it is up`);
      await sleep(POLL_MS);
    }
  }
}

/** The live runtime's database, over the wire: its worker serializes whole exchanges and transactions per connection. */
async function through(dir: string, runtime: LockRecord): Promise<Database> {
  const pool = wirePool(runtime.socket!, 1);
  try {
    await ping(pool);
  } catch (err) {
    await pool.end();
    throw new Error(`PGLITE_DATA_DIR ${dir} belongs to ${runtime.holder} (pid ${runtime.pid}), whose database does not answer at ${runtime.socket} (${(err as Error).message}): restart it`);
  }
  return { pool, engine: 'pglite', location: `${dir}, through ${runtime.holder} pid ${runtime.pid}`, via: runtime, failure: () => null, close: () => pool.end() };
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
 * Embedded PGlite runs in a worker thread behind the Postgres wire protocol on a Unix socket in its
 * data directory (`pglite-thread.ts`): the same `pg` path as a server, no query ever blocks the
 * event loop that answers kiosks, and no one but this user can connect. The worker gives its one
 * PGlite session to one connection at a time, a whole exchange or transaction each.
 */
async function openEmbedded(opts: DatabaseOptions, holder: string, serves: boolean): Promise<Database> {
  const dir = opts.pgliteDataDir;
  const memory = dir.startsWith('memory://');
  if (!memory) {
    // A path too long for the socket is refused before anything is created.
    dataDirSocket(dir);
    await privateDataDir(dir);
  }
  // Before PGlite opens the files: a second PGlite on them would silently drop one side's writes.
  const lock = memory ? null : await lockDataDir(path.resolve(dir), holder, serves);
  let thread;
  try {
    thread = await startPgliteThread(dir, { idleOwnerMs: opts.idleOwnerMs, sharedBuffersMb: opts.pgliteSharedBuffersMb, image: opts.pgliteImage });
  } catch (err) {
    await lock?.release();
    throw err;
  }
  const { worker, socket } = thread;
  try {
    if (serves) await lock?.publish(socket);
  } catch (err) {
    await thread.close();
    await lock?.release();
    throw err;
  }
  let closing = false;
  let failure: string | null = null;
  const died = (err: Error) => {
    if (closing || failure) return;
    // A fixed reason, for /health to show: an engine error's message may quote a query.
    failure = 'the embedded database thread is dead';
    opts.onFatal?.(err);
  };
  worker.on('error', died);
  // The code shows in logs, whose error serializer keeps no message. Told synchronously on 'exit':
  // from then on, /health says so.
  worker.once('exit', (code) => died(Object.assign(new Error(`the embedded database thread exited with code ${code}`), { code: 'ERR_DATABASE_THREAD_EXITED' })));
  const pool = wirePool(socket, EMBEDDED_POOL_SIZE);
  return {
    pool,
    engine: 'pglite',
    location: dir,
    thread: worker,
    failure: () => failure,
    close: async () => {
      closing = true;
      await pool.end();
      await thread.close();
      await lock?.release();
    },
  };
}

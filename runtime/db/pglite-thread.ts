import { execFile } from 'node:child_process';
import { access, chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isMainThread, Worker } from 'node:worker_threads';

/**
 * The embedded database's thread (`pglite-worker.js`) and where it serves the Postgres wire
 * protocol: a Unix socket, never a TCP port. PGlite accepts any login as superuser, so whoever
 * can connect owns every senior's data; a socket in a directory only this process's user can
 * enter (0700) lets nobody else connect, as a real PostgreSQL's `peer`/socket setup would.
 */

/** The socket's file name, as PostgreSQL names it: `pg` opens `<host>/.s.PGSQL.<port>` when `host` is a directory. */
const SOCKET_PORT = 5432;
export const SOCKET_FILE = `.s.PGSQL.${SOCKET_PORT}`;
/** `sun_path` holds 108 bytes on Linux (104 on macOS and the BSDs), the terminating NUL included. */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;

/** How the `pg` client reaches a socket at `socket` (a `.s.PGSQL.<port>` path). */
export function socketClientConfig(socket: string): { host: string; port: number } {
  const port = /^\.s\.PGSQL\.(\d+)$/.exec(path.basename(socket))?.[1];
  if (!port) throw new Error(`${socket} is not a PostgreSQL socket path (.s.PGSQL.<port>)`);
  return { host: path.dirname(socket), port: Number(port) };
}

/** The socket of a data directory, or a clear refusal when the path cannot be a Unix socket's. */
function socketIn(dir: string, what: string): string {
  const socket = path.join(dir, SOCKET_FILE);
  const bytes = Buffer.byteLength(socket);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `${what} is too long for the embedded database's socket: ${socket} is ${bytes} bytes, and a Unix socket path holds at most ${MAX_SOCKET_PATH_BYTES}; use a path at most ${MAX_SOCKET_PATH_BYTES - SOCKET_FILE.length - 1} bytes long`,
    );
  }
  return socket;
}

/**
 * Where a data directory's socket will be, checked before anything is created: a path too long
 * fails the start with one line rather than serving from somewhere else (a socket in /tmp would be
 * left behind by a kill -9, and a command in another mount namespace would not find it).
 */
export function dataDirSocket(dataDir: string): string {
  return socketIn(path.resolve(dataDir), `PGLITE_DATA_DIR ${path.resolve(dataDir)}`);
}

/**
 * Makes the data directory owner-only (0700), an existing one too: a directory an older version
 * created 0755 is tightened here, and the worker tightens the files inside.
 */
export async function privateDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
}

/**
 * PGlite creates some files itself with mode 0666 (fopen's), which only the process umask narrows,
 * and a worker thread cannot set the umask: the process keeps an owner-only one (as the PostgreSQL
 * postmaster sets for itself) while any embedded database is open in it, and gets its own back after.
 */
let umaskHolders = 0;
let umaskBefore = 0;
function holdOwnerOnlyUmask(): () => void {
  // Only the main thread may set it; a database opened in a worker relies on the 0700 directory and the start-time tightening.
  if (!isMainThread) return () => {};
  if (umaskHolders++ === 0) {
    umaskBefore = process.umask(0o077);
    process.umask(umaskBefore | 0o077);
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--umaskHolders === 0) process.umask(umaskBefore);
  };
}

/**
 * PGlite's shared_buffers (PostgreSQL's default is 128 MiB), in its WebAssembly memory, resident once
 * touched: a first start's initdb touches them all. 16 MiB holds a kiosk fleet's hot pages (profiles,
 * consents, a senior's facts); the rest is read from the data files through the OS page cache, whose
 * memory the kernel can reclaim (bench:idle-memory; bench:recall at 20,000 facts for the cost).
 */
export const PGLITE_SHARED_BUFFERS_MB = 16;

/**
 * The largest message the embedded database's wire server takes: far above the runtime's largest (a
 * bulk bind of ~10 MB), far below what PGlite's WebAssembly memory could hold. A message is kept whole
 * before it runs, so without a bound a client announcing a gigabyte would have the thread keep it all.
 */
export const PGLITE_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** A new directory's initdb in its own process takes 1–3 s; beyond this (a machine at a standstill) the start fails. */
const INITDB_TIMEOUT_MS = 120_000;
/**
 * How long a closing thread has to checkpoint, close PGlite and end on its own. Only past it is the
 * thread terminated: terminating a thread whose WebAssembly V8 may still be compiling in the
 * background is what crashed test processes with SIGTRAP (nodejs/node#33377), and a thread that never
 * ends must not hold a shutdown forever.
 */
export const PGLITE_CLOSE_MS = 10_000;

/**
 * Initializes a new data directory in a short-lived process, before the database thread opens it:
 * PGlite's initdb run in the runtime would leave ~115 MiB of its memory resident for the process's
 * whole life (bench:idle-memory). A directory that already holds a cluster (PG_VERSION) is left alone.
 */
async function initPgliteDataDir(dataDir: string): Promise<void> {
  if (await hasCluster(dataDir)) return;
  const script = new URL('./pglite-initdb.ts', import.meta.url).pathname;
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [script, dataDir], { timeout: INITDB_TIMEOUT_MS, killSignal: 'SIGKILL' }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const why = err.killed ? `did not finish within ${INITDB_TIMEOUT_MS / 1000} s` : `failed (${stderr.trim().split('\n').at(-1) ?? err.message})`;
      reject(new Error(`the embedded database's initdb in ${dataDir} ${why}`));
    });
  });
}

function hasCluster(dataDir: string): Promise<boolean> {
  return access(path.join(dataDir, 'PG_VERSION')).then(() => true, () => false);
}

export interface PgliteThread {
  worker: Worker;
  /** The Unix socket the database is served on. */
  socket: string;
  /** Resolves with the thread's exit code. */
  exited: Promise<number>;
  /** Writes the database's whole cluster to `file` (a tar), from which another throwaway database can start (`image`). */
  dump(file: string): Promise<void>;
  /** Closes PGlite cleanly (unless the thread is already gone) and lets the thread end (terminated past PGLITE_CLOSE_MS), removes a throwaway database's socket directory. */
  close(): Promise<void>;
}

export interface PgliteThreadOptions {
  idleOwnerMs?: number | undefined;
  sharedBuffersMb?: number | undefined;
  /** A new database (`memory://`, or a directory without a cluster yet) starts as a copy of this image (`PgliteThread.dump`'s tar), not from initdb. */
  image?: string | undefined;
}

/**
 * PGlite's engine (its WebAssembly), compiled once per process and handed to every database thread the
 * process starts. V8 shares a compiled module's code between threads: a thread after the first compiles
 * neither the engine nor the functions an earlier one compiled on their first call. A failed read or
 * compile is not kept: the next start tries again.
 */
let engine: Promise<WebAssembly.Module> | undefined;
function pgliteEngine(): Promise<WebAssembly.Module> {
  engine ??= readFile(path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), 'pglite.wasm'))
    .then((bytes) => WebAssembly.compile(bytes))
    .catch((err: unknown) => {
      engine = undefined;
      throw err;
    });
  return engine;
}

/** How long a dump may take: tens of MiB copied in memory and written, seconds on a loaded machine. */
const DUMP_TIMEOUT_MS = 60_000;

/**
 * Starts the embedded database's thread on `dataDir` (a directory, already made private and locked
 * by the caller, or `memory://`) and waits until it serves. A `memory://` database's socket lives in
 * a private `mkdtemp` directory (0700), removed at close.
 */
export async function startPgliteThread(dataDir: string, opts: PgliteThreadOptions = {}): Promise<PgliteThread> {
  const memory = dataDir.startsWith('memory://');
  const socketDir = memory ? await mkdtemp(path.join(tmpdir(), 'kohami-pg-')) : null;
  // A throwaway database writes no file but its socket, in a directory that is already 0700.
  const releaseUmask = memory ? () => {} : holdOwnerOnlyUmask();
  const cleanup = async () => {
    releaseUmask();
    if (socketDir) await rm(socketDir, { recursive: true, force: true });
  };
  let worker: Worker;
  let socket: string;
  try {
    socket = socketDir ? socketIn(socketDir, `the temporary directory ${socketDir}`) : dataDirSocket(dataDir);
    // A directory that already holds a cluster resumes it, whatever the image.
    const image = opts.image && (memory || !(await hasCluster(dataDir))) ? opts.image : undefined;
    // Under the owner-only umask, which the initdb process inherits.
    if (!memory && !image) await initPgliteDataDir(dataDir);
    worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData: { dataDir, socket, image, engine: await pgliteEngine(), idleOwnerMs: opts.idleOwnerMs, maxMessageBytes: PGLITE_MAX_MESSAGE_BYTES, sharedBuffersMb: opts.sharedBuffersMb ?? PGLITE_SHARED_BUFFERS_MB } });
  } catch (err) {
    await cleanup();
    throw err;
  }
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  try {
    await Promise.race([
      new Promise<void>((resolve) => worker.once('message', () => resolve())),
      new Promise<never>((_resolve, reject) => worker.once('error', reject)),
      exited.then((code) => Promise.reject(new Error(`embedded database thread exited with code ${code} while starting`))),
    ]);
  } catch (err) {
    await worker.terminate();
    await cleanup();
    throw err;
  }
  let alive = true;
  worker.once('exit', () => (alive = false));
  return {
    worker,
    socket,
    exited,
    dump: (file) => dumpThrough(worker, file),
    close: async () => {
      if (alive) {
        worker.postMessage({ type: 'close' });
        let bound: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((resolve) => (bound = setTimeout(resolve, PGLITE_CLOSE_MS)))]);
        clearTimeout(bound);
      }
      if (alive) await worker.terminate();
      await cleanup();
    },
  };
}

function dumpThrough(worker: Worker, file: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const bound = setTimeout(() => settle(new Error(`the embedded database's dump to ${file} did not finish within ${DUMP_TIMEOUT_MS / 1000} s`)), DUMP_TIMEOUT_MS);
    const answer = (msg: { type: string; message?: string }) => {
      if (msg.type === 'dumped') settle(null);
      else if (msg.type === 'dump-failed') settle(new Error(`the embedded database's dump to ${file} failed: ${msg.message}`));
    };
    const exit = (code: number) => settle(new Error(`the embedded database thread exited with code ${code} during a dump`));
    const settle = (err: Error | null) => {
      clearTimeout(bound);
      worker.off('message', answer).off('exit', exit);
      if (err) reject(err);
      else resolve();
    };
    worker.on('message', answer).on('exit', exit);
    worker.postMessage({ type: 'dump', file });
  });
}

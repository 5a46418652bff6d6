import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

/**
 * One owner per embedded database: `<PGLITE_DATA_DIR>/kohami.lock` names the process that
 * has the directory open. It lives inside the directory (PGlite's initdb accepts a fresh
 * directory holding it) so that everyone who can reach the data, on a shared volume too,
 * sees the lock.
 *
 * A lock is never half-written: its record is written and fsynced under a private name,
 * then `link`ed into place (atomic, fails if the lock exists) or `rename`d over it to
 * update it. A dead holder's lock is removed at once, race-free: only the process that
 * creates the claim `kohami.lock.<id of the dead lock>` (exclusively, the same way) may
 * remove it, after checking under that claim that the lock is still that dead one; a
 * claimer that died in turn is removed the same way, one level down.
 */
export const LOCK_FILE = 'kohami.lock';

const record = z.object({
  /** Unique per acquisition: what a claim names, and what release checks. */
  id: z.string().regex(/^[0-9a-f]{16}$/),
  pid: z.number().int().positive(),
  host: z.string(),
  /** Linux boot id: a lock written before the machine restarted is dead. */
  bootId: z.string().nullable(),
  /** The holder's start time (clock ticks since boot, /proc/<pid>/stat): a reused pid is not the holder. */
  startTicks: z.number().int().nullable(),
  since: z.string(),
  /** Who holds it, for the messages: `kohami-runtime`, `npm run cli`… */
  holder: z.string(),
  /** The holder serves the database to commands (the runtime): they wait for its address rather than fail. */
  serves: z.boolean(),
  /** The Unix socket (`<dir>/.s.PGSQL.5432`) where the holder serves the database over the Postgres wire protocol, once it does. */
  socket: z.string().optional(),
  /** host:port of the TCP listener an older version served on: such a holder is asked to be restarted. */
  address: z.string().optional(),
});
export type LockRecord = z.infer<typeof record>;

export class DataDirLockedError extends Error {
  readonly dir: string;
  readonly holder: LockRecord;
  readonly otherHost: boolean;

  constructor(
    dir: string,
    holder: LockRecord,
    otherHost: boolean,
  ) {
    const who = `${holder.holder} (pid ${holder.pid} on host ${holder.host}, since ${holder.since})`;
    const what = otherHost
      ? `is locked by ${who}, another host sharing this directory: stop it there, or if that host is gone delete ${path.join(dir, LOCK_FILE)}`
      : `is in use by ${who}: ${holder.serves ? 'one process owns an embedded database; stop it first or set another PGLITE_DATA_DIR' : 'run this again once it has finished'}`;
    super(`PGLITE_DATA_DIR ${dir} ${what}`);
    this.dir = dir;
    this.holder = holder;
    this.otherHost = otherHost;
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly record: LockRecord;
  /** Records the socket the database is served on, for commands run meanwhile. */
  publish(socket: string): Promise<void>;
  /** Removes the lock if it is still this one. */
  release(): Promise<void>;
}

/** How long to wait for another process that is removing the same dead lock right now. */
export const RECOVERY_WAIT_MS = 2_000;
/** Claims of claims: each level needs its claimer killed within a few system calls. */
const MAX_CLAIM_DEPTH = 3;

/** State and start time of a process, from /proc (Linux); null when it cannot be read. */
async function readProcess(pid: number | 'self'): Promise<{ state: string; startTicks: number } | null> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name, which is in parentheses and may hold anything.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, startTicks: Number(fields[19]) };
}

async function bootId(): Promise<string | null> {
  return readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (s) => s.trim(),
    () => null,
  );
}

async function ownRecord(holder: string, serves: boolean): Promise<LockRecord> {
  return {
    id: randomBytes(8).toString('hex'),
    pid: process.pid,
    host: hostname(),
    bootId: await bootId(),
    startTicks: (await readProcess('self'))?.startTicks ?? null,
    since: new Date().toISOString(),
    holder,
    serves,
  };
}

type Liveness = 'alive' | 'dead' | 'other-host';

/** Whether a process has this pid (EPERM: it has, another user's). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function liveness(r: LockRecord): Promise<Liveness> {
  // Another host's processes cannot be checked from here (containers sharing a volume count as hosts).
  if (r.host !== hostname()) return 'other-host';
  const boot = await bootId();
  if (boot && r.bootId && boot !== r.bootId) return 'dead';
  const proc = await readProcess(r.pid);
  // Without /proc (macOS, or hidden by hidepid) only the pid's existence can be known.
  if (!proc) return exists(r.pid) ? 'alive' : 'dead';
  // A zombie not yet reaped, or another process that was given the same pid.
  if (proc.state === 'Z' || proc.state === 'X') return 'dead';
  return r.startTicks === null || proc.startTicks === r.startTicks ? 'alive' : 'dead';
}

class UnreadableLockError extends Error {}

/** The record at `file`, or null if there is none. */
async function readRecord(file: string): Promise<LockRecord | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return record.parse(JSON.parse(text));
  } catch {
    throw new UnreadableLockError(`${file} is not a lock this runtime wrote; if no kohami process uses this directory, delete it`);
  }
}

/**
 * Writes `r` under a private name, fsynced; returns that name. Owner-only (0600): the record leads to
 * the database's socket, which only this user may reach anyway, and says nothing to anyone else.
 */
async function stage(file: string, r: LockRecord): Promise<string> {
  const staged = `${file}.${r.id}.tmp`;
  const handle = await open(staged, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(r)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return staged;
}

/** Creates `file` holding `r` if there is none; false if one exists. */
async function create(file: string, r: LockRecord): Promise<boolean> {
  const staged = await stage(file, r);
  try {
    await link(staged, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(staged);
  }
}

/**
 * Creates `file` for `r`, removing a dead holder's first; returns null once created, or the
 * live holder's record and whether it is on another host.
 */
async function acquire(file: string, r: LockRecord, depth: number): Promise<{ holder: LockRecord; state: Liveness } | null> {
  const deadline = Date.now() + RECOVERY_WAIT_MS;
  for (;;) {
    if (await create(file, r)) return null;
    const current = await readRecord(file);
    if (current) {
      const state = await liveness(current);
      if (state !== 'dead') return { holder: current, state };
      // Removed (by this process or another): try again at once; claimed by another: wait for it.
      if (!(await removeDead(file, current, depth))) await sleep(10);
    }
    if (Date.now() > deadline) throw new Error(`could not take ${file}: another process keeps recovering it`);
  }
}

/** Removes `file` if it still is the dead `dead`, under its claim; false while someone else holds that claim. */
async function removeDead(file: string, dead: LockRecord, depth: number): Promise<boolean> {
  if (depth >= MAX_CLAIM_DEPTH) throw new Error(`could not recover ${file}: its recoverers keep dying`);
  const claim = `${file}.${dead.id}`;
  const claimRecord = await ownRecord('lock recovery', false);
  if (await acquire(claim, claimRecord, depth + 1)) return false;
  try {
    // Only this claim's holder removes this dead lock, so it cannot change between the check and the unlink.
    if ((await readRecord(file))?.id === dead.id) await unlink(file);
  } finally {
    await unlink(claim);
  }
  return true;
}

/**
 * Takes `<dir>/kohami.lock` for this process, or throws DataDirLockedError naming its live holder.
 * `serves`: this process will publish where it serves the database (the runtime).
 */
export async function lockDataDir(dir: string, holder: string, serves: boolean): Promise<DataDirLock> {
  const file = path.join(dir, LOCK_FILE);
  let own = await ownRecord(holder, serves);
  let held;
  try {
    held = await acquire(file, own, 0);
  } catch (err) {
    if (err instanceof UnreadableLockError) throw new Error(`PGLITE_DATA_DIR ${dir} has an unreadable lock: ${err.message}`);
    throw err;
  }
  if (held) throw new DataDirLockedError(dir, held.holder, held.state === 'other-host');
  const stillOurs = async () => (await readRecord(file).catch(() => null))?.id === own.id;
  return {
    get record() {
      return own;
    },
    async publish(socket) {
      if (!(await stillOurs())) throw new Error(`${file} was taken from this process`);
      const next = { ...own, socket };
      await rename(await stage(file, next), file);
      own = next;
    },
    async release() {
      if (await stillOurs()) await unlink(file);
    },
  };
}

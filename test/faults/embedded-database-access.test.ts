import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { access, chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE, type LockRecord } from '../../runtime/db/data-dir-lock.ts';
import { openCommandDatabase, openDatabase } from '../../runtime/db/database.ts';
import { MAX_SOCKET_PATH_BYTES, SOCKET_FILE, socketClientConfig, startPgliteThread } from '../../runtime/db/pglite-thread.ts';
import { testDatabaseImage } from '../support/database-image.ts';
import { TEST_NODE_FLAGS } from '../support/node-flags.ts';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/**
 * A fresh directory to put a data directory in, traversable by everyone (mkdtemp's 0700 would hide
 * the data directory from other users by itself): only the data directory's own modes protect it.
 */
async function openParent(): Promise<string> {
  const parent = await mkdtemp(path.join(tmpdir(), 'kohami-access-'));
  await chmod(parent, 0o755);
  return parent;
}

/**
 * The runtime's database opened in a child process under umask 0 (so that no mode below comes from
 * the umask of whoever runs the tests), migrated, with rows written. `older: true` first lays the
 * directory out as an older version left it: PGlite run directly, the directory 0755.
 * Commands on stdin: `close`. Lines on stdout: `open`, `closed`.
 */
async function databaseProcess(older = false): Promise<{ dir: string; proc: ChildProcess; step(command: string | null, answer: string): Promise<void> }> {
  const dir = path.join(await openParent(), 'pglite');
  const module = (file: string) => JSON.stringify(pathToFileURL(path.resolve(file)).href);
  const code = `
    process.umask(0);
    const dir = ${JSON.stringify(dir)};
    if (${older}) {
      const { PGlite } = await import(${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href)});
      const { mkdirSync, chmodSync } = await import('node:fs');
      mkdirSync(dir);
      chmodSync(dir, 0o755);
      const old = await PGlite.create({ dataDir: dir });
      await old.close();
      console.log('older');
      await new Promise((resolve) => process.stdin.once('data', resolve));
    }
    const { openDatabase } = await import(${module('runtime/db/database.ts')});
    const { migrate } = await import(${module('adapters/postgres/migrations.ts')});
    const db = await openDatabase({ pgliteDataDir: dir });
    await migrate(db.pool);
    await db.pool.query("INSERT INTO seniors (display_name) VALUES ('Jeanne')");
    await db.pool.query('CHECKPOINT');
    console.log('open');
    await new Promise((resolve) => process.stdin.once('data', resolve));
    await db.close();
    console.log('closed');
    process.exit(0);`;
  // A file, not -e: the database's worker thread inherits the process's flags, and --input-type fails a worker's file.
  const script = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-access-script-')), 'database.mjs');
  await writeFile(script, code);
  const proc = spawn(process.execPath, [...TEST_NODE_FLAGS, script], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(proc);
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  /** Sends `command` (if any), then waits for the process's next line, which must be `answer`. */
  const step = async (command: string | null, answer: string) => {
    if (command) proc.stdin!.write(`${command}\n`);
    expect(await nextLine(lines)).toBe(answer);
  };
  return { dir, proc, step };
}
const nextLine = async (lines: AsyncIterator<string>) => (await lines.next()).value as string;

interface Entry {
  file: string;
  kind: 'dir' | 'file' | 'socket' | 'other';
  mode: string;
}

/** Every entry under `dir` (itself included), with its kind and permission bits in octal. */
async function entries(dir: string): Promise<Entry[]> {
  const found: Entry[] = [];
  const visit = async (file: string) => {
    const s = await lstat(file);
    const kind = s.isDirectory() ? 'dir' : s.isFile() ? 'file' : s.isSocket() ? 'socket' : 'other';
    found.push({ file: path.relative(dir, file) || '.', kind, mode: (s.mode & 0o777).toString(8) });
    if (s.isDirectory()) for (const name of await readdir(file)) await visit(path.join(file, name));
  };
  await visit(dir);
  return found;
}

/** What is not owner-only: a directory not 0700, a file not 0600, a socket open to group or others. */
const notOwnerOnly = (list: Entry[]) =>
  list.filter((e) => (e.kind === 'dir' ? e.mode !== '700' : e.kind === 'file' ? e.mode !== '600' : (parseInt(e.mode, 8) & 0o077) !== 0));

/** The TCP sockets process `pid` listens on (/proc: Linux), as the kernel's hex local addresses. */
async function tcpListeners(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const listening: string[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = (await readFile(`/proc/${pid}/net/${table}`, 'utf8')).trim().split('\n').slice(1);
    for (const row of rows) {
      const cols = row.trim().split(/\s+/);
      // Column 3 is the state (0A: LISTEN), column 9 the socket's inode.
      if (cols[3] === '0A' && inodes.has(cols[9]!)) listening.push(cols[1]!);
    }
  }
  return listening;
}

const ownerAndMode = async (file: string) => {
  const s = await stat(file);
  return { uid: s.uid, mode: (s.mode & 0o777).toString(8) };
};
const lockRecord = async (dir: string) => JSON.parse(await readFile(path.join(dir, LOCK_FILE), 'utf8')) as LockRecord;

describe('the embedded database is reachable by the runtime’s own user only', () => {
  /** One database process for the claims about a running one (each start is an initdb and every migration). */
  let db: Awaited<ReturnType<typeof databaseProcess>>;
  beforeAll(async () => {
    db = await databaseProcess();
    // It outlives each test (the file's afterEach kills what a test started): killed in afterAll if still up.
    children.splice(children.indexOf(db.proc), 1);
    await db.step(null, 'open');
  });
  afterAll(() => {
    db?.proc.kill('SIGKILL');
  });

  it('listens on no TCP port: it serves on a Unix socket in its data directory, named in the lock file', async () => {
    const dir = db.dir;

    expect(await tcpListeners(db.proc.pid!)).toEqual([]);
    const record = await lockRecord(dir);
    expect(record.socket).toBe(path.join(dir, SOCKET_FILE));
    expect(record).not.toHaveProperty('address');
    expect((await stat(record.socket!)).isSocket()).toBe(true);
    const client = new pg.Client({ ...socketClientConfig(record.socket!), user: 'postgres', database: 'postgres' });
    await client.connect();
    expect((await client.query('SELECT count(*)::int AS n FROM seniors')).rows).toEqual([{ n: 1 }]);
    await client.end();
  });

  it('another local user can open neither the socket, nor the lock file, nor the data files', async () => {
    const dir = db.dir;
    const socket = path.join(dir, SOCKET_FILE);

    // Checked under any user, and enough by the kernel's rule: only its owner (and root) may enter a
    // 0700 directory, so no one else reaches the socket, the lock or a file inside.
    expect(await ownerAndMode(dir)).toEqual({ uid: process.getuid!(), mode: '700' });

    if (process.getuid!() === 0) {
      // Root can also show it for real: the same attempts as the unprivileged user nobody.
      const attempt = spawn(
        process.execPath,
        [
          '-e',
          `const fs = require('node:fs'); const net = require('node:net');
           const code = (f) => { try { f(); return 'opened'; } catch (err) { return err.code; } };
           const lock = code(() => fs.readFileSync(${JSON.stringify(path.join(dir, LOCK_FILE))}));
           const files = code(() => fs.readFileSync(${JSON.stringify(path.join(dir, 'pg_hba.conf'))}));
           net.connect(${JSON.stringify(socket)}).on('connect', () => { console.log(JSON.stringify({ lock, files, socket: 'connected' })); process.exit(0); })
             .on('error', (err) => console.log(JSON.stringify({ lock, files, socket: err.code })));`,
        ],
        { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.push(attempt);
      const [line] = await Promise.all([nextLine(createInterface({ input: attempt.stdout! })[Symbol.asyncIterator]()), once(attempt, 'exit')]);
      expect(JSON.parse(line)).toEqual({ lock: 'EACCES', files: 'EACCES', socket: 'EACCES' });
    }
  });

  it('under umask 0: the data directory is 0700 and every file in it 0600 (the lock file too) while it runs and once it is closed', async () => {
    const dir = db.dir;

    const running = await entries(dir);
    expect(running.find((e) => e.file === '.')).toMatchObject({ kind: 'dir', mode: '700' });
    expect(running.find((e) => e.file === LOCK_FILE)).toMatchObject({ kind: 'file', mode: '600' });
    expect(running.find((e) => e.file === SOCKET_FILE)).toMatchObject({ kind: 'socket' });
    expect(running.filter((e) => e.kind === 'file').length).toBeGreaterThan(500);
    expect(notOwnerOnly(running)).toEqual([]);

    // Last of the running database's tests: it closes it.
    await db.step('close', 'closed');
    expect(notOwnerOnly(await entries(dir))).toEqual([]);
  });

  it('a data directory an older version left open (0755, its files 0666) is made owner-only at start', async () => {
    const db = await databaseProcess(true);
    await db.step(null, 'older');
    const dir = db.dir;
    const before = await entries(dir);
    expect(before.find((e) => e.file === '.')).toMatchObject({ mode: '755' });
    expect(before.find((e) => e.file === 'pg_hba.conf')).toMatchObject({ mode: '666' });

    await db.step('go', 'open');
    expect(notOwnerOnly(await entries(dir))).toEqual([]);
    await db.step('close', 'closed');
  });

  it(`a data directory whose socket path would pass the ${MAX_SOCKET_PATH_BYTES}-byte limit of a Unix socket is refused at start, creating nothing; one at the limit serves`, async () => {
    const parent = await openParent();
    // The socket is `<dir>/.s.PGSQL.5432`: the directory's path may take what the file name leaves.
    const atLimit = path.join(parent, 'd'.repeat(MAX_SOCKET_PATH_BYTES - SOCKET_FILE.length - 1 - parent.length - 1));
    expect(Buffer.byteLength(path.join(atLimit, SOCKET_FILE))).toBe(MAX_SOCKET_PATH_BYTES);
    const tooLong = `${atLimit}e`;

    await expect(openDatabase({ pgliteDataDir: tooLong })).rejects.toThrow(
      `PGLITE_DATA_DIR ${tooLong} is too long for the embedded database's socket: ${path.join(tooLong, SOCKET_FILE)} is ${MAX_SOCKET_PATH_BYTES + 1} bytes, and a Unix socket path holds at most ${MAX_SOCKET_PATH_BYTES}; use a path at most ${MAX_SOCKET_PATH_BYTES - SOCKET_FILE.length - 1} bytes long`,
    );
    await expect(access(tooLong)).rejects.toMatchObject({ code: 'ENOENT' });

    // From the run's migrated image: the socket's path is the subject here, not a first start's initdb.
    const db = await openDatabase({ pgliteDataDir: atLimit, pgliteImage: testDatabaseImage() });
    expect(await db.pool.query('SELECT 1 AS one')).toMatchObject({ rows: [{ one: 1 }] });
    expect((await lockRecord(atLimit)).socket).toBe(path.join(atLimit, SOCKET_FILE));
    await db.close();
  });

  it('a throwaway (memory://) database serves on a socket in a private directory of its own, removed at close', async () => {
    const thread = await startPgliteThread('memory://');
    const socketDir = path.dirname(thread.socket);
    expect(await ownerAndMode(socketDir)).toEqual({ uid: process.getuid!(), mode: '700' });
    expect((await stat(thread.socket)).isSocket()).toBe(true);
    expect(await tcpListeners(process.pid)).toEqual([]);
    await thread.close();
    await expect(access(socketDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a command beside a runtime of an older version, which serves on TCP, is told to restart it rather than connect', async () => {
    const dir = path.join(await openParent(), 'pglite');
    await mkdir(dir);
    // This process, alive, as the holder that published a TCP address.
    const older = { id: randomBytes(8).toString('hex'), pid: process.pid, host: hostname(), bootId: null, startTicks: null, since: new Date().toISOString(), holder: 'kohami-runtime', serves: true, address: '127.0.0.1:5999' };
    await writeFile(path.join(dir, LOCK_FILE), JSON.stringify(older));
    await expect(openCommandDatabase({ pgliteDataDir: dir }, 'npm run cli')).rejects.toThrow(
      `PGLITE_DATA_DIR ${dir} belongs to kohami-runtime (pid ${process.pid}), an older version that serves its database on TCP: restart it with this version, then run this again`,
    );
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, LOCK_FILE, lockDataDir, RECOVERY_WAIT_MS, type LockRecord } from '../../runtime/db/data-dir-lock.ts';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

const freshDir = () => mkdtemp(path.join(tmpdir(), 'kohami-lock-'));
const lockFile = (dir: string) => path.join(dir, LOCK_FILE);
const bootId = async () => (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
const startTicks = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return { state: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!, ticks: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) };
};

/** A lock record as another process would have left it. */
async function leaveLock(file: string, fields: Partial<LockRecord>): Promise<LockRecord> {
  const record: LockRecord = {
    id: randomBytes(8).toString('hex'),
    pid: 1,
    host: hostname(),
    bootId: await bootId(),
    startTicks: null,
    since: '2025-06-01T08:00:00.000Z',
    holder: 'kohami-runtime',
    serves: true,
    ...fields,
  };
  await writeFile(file, JSON.stringify(record));
  return record;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

/** A child process running `code` with the lock module imported as `lockDataDir`; its stdout lines. */
function child(code: string): { proc: ChildProcess; lines: AsyncIterator<string> } {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', `const { lockDataDir } = await import('./runtime/db/data-dir-lock.ts');\n${code}`], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(proc);
  return { proc, lines: createInterface({ input: proc.stdout! })[Symbol.asyncIterator]() };
}

const nextLine = async (lines: AsyncIterator<string>) => (await lines.next()).value as string;

describe('the data directory lock', () => {
  it('is taken on a fresh directory, names its holder, and is gone once released', async () => {
    const dir = await freshDir();
    const lock = await lockDataDir(dir, 'kohami-runtime', true);
    const written = JSON.parse(await readFile(lockFile(dir), 'utf8')) as LockRecord;
    expect(written).toMatchObject({ pid: process.pid, host: hostname(), holder: 'kohami-runtime', serves: true, bootId: await bootId() });
    expect(written.startTicks).toBe((await startTicks(process.pid)).ticks);
    await lock.publish(path.join(dir, '.s.PGSQL.5432'));
    expect(JSON.parse(await readFile(lockFile(dir), 'utf8'))).toEqual({ ...written, socket: path.join(dir, '.s.PGSQL.5432') });
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
    await (await lockDataDir(dir, 'kohami-runtime', true)).release();
  });

  it('held by a live process: refused with one line naming the directory and the holder; after its kill -9, taken at once', async () => {
    const dir = await freshDir();
    const holder = child(`await lockDataDir(${JSON.stringify(dir)}, 'kohami-runtime', true); console.log('locked'); process.stdin.resume();`);
    expect(await nextLine(holder.lines)).toBe('locked');

    const refusal = await lockDataDir(dir, 'kohami-runtime', true).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(DataDirLockedError);
    const message = (refusal as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(new RegExp(`^PGLITE_DATA_DIR ${dir} is in use by kohami-runtime \\(pid ${holder.proc.pid} on host ${hostname()}, since \\d{4}-\\d\\d-\\d\\dT`));

    holder.proc.kill('SIGKILL');
    await once(holder.proc, 'exit');
    // At once: no wait for another recoverer, whose bound is RECOVERY_WAIT_MS (a few file operations take
    // a quiet machine milliseconds, a loaded one — two suites on two cores — over 500 ms).
    const started = Date.now();
    const lock = await lockDataDir(dir, 'kohami-runtime', true);
    expect(Date.now() - started).toBeLessThan(RECOVERY_WAIT_MS);
    expect(lock.record.pid).toBe(process.pid);
    await lock.release();
  });

  it('a pid now given to another process, a zombie, or a lock from before a reboot is not a live holder', async () => {
    const dir = await freshDir();
    const sleeper = spawn('sleep', ['30']);
    children.push(sleeper);
    const { ticks } = await startTicks(sleeper.pid!);
    // The control: that very process, with its start time, holds the lock.
    await leaveLock(lockFile(dir), { pid: sleeper.pid!, startTicks: ticks, holder: 'npm run cli', serves: false });
    await expect(lockDataDir(dir, 'kohami-runtime', true)).rejects.toThrow(`is in use by npm run cli (pid ${sleeper.pid}`);
    // The same pid with another start time: the holder died and its pid was reused.
    await leaveLock(lockFile(dir), { pid: sleeper.pid!, startTicks: ticks - 1 });
    await (await lockDataDir(dir, 'kohami-runtime', true)).release();

    // A zombie: exited, not yet reaped by its parent (here a shell that exec'd into sleep). The child lives
    // a second, so that it exits after the exec: one that exits before could be reaped by the shell itself.
    const shell = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 30']);
    children.push(shell);
    const zombie = Number(await nextLine(createInterface({ input: shell.stdout! })[Symbol.asyncIterator]()));
    // Under a loaded suite the background sleep can take more than poll's default second to start and exit.
    await expect.poll(async () => (await startTicks(zombie)).state, { timeout: 10_000 }).toBe('Z');
    await leaveLock(lockFile(dir), { pid: zombie, startTicks: (await startTicks(zombie)).ticks });
    await (await lockDataDir(dir, 'kohami-runtime', true)).release();

    // This very pid and start time, but written during another boot of the machine.
    await leaveLock(lockFile(dir), { pid: process.pid, startTicks: (await startTicks(process.pid)).ticks, bootId: 'a-previous-boot' });
    await (await lockDataDir(dir, 'kohami-runtime', true)).release();
  });

  it('a stale lock with many contenders at the same moment: exactly one wins, every other is refused naming it', async () => {
    const dir = await freshDir();
    for (let round = 0; round < 25; round += 1) {
      await leaveLock(lockFile(dir), { pid: await deadPid() });
      // Arrivals spread over 3 ms: some contender reads the dead lock after another has already replaced it.
      const arrive = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => arrive().then(() => lockDataDir(dir, 'kohami-runtime', true))));
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(won).toHaveLength(1);
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as DataDirLockedError] : []));
      expect(refused.map((e) => e.holder.id)).toEqual(Array(7).fill(won[0]!.record.id));
      expect(JSON.parse(await readFile(lockFile(dir), 'utf8')).id).toBe(won[0]!.record.id);
      await won[0]!.release();
      expect(await readdir(dir)).toEqual([]);
    }
  });

  it('separate processes released at once on a stale lock: exactly one wins', async () => {
    const dir = await freshDir();
    await leaveLock(lockFile(dir), { pid: await deadPid() });
    const contenders = Array.from({ length: 4 }, () =>
      child(`
        console.log('ready');
        process.stdin.once('data', async () => {
          try { console.log('won ' + (await lockDataDir(${JSON.stringify(dir)}, 'kohami-runtime', true)).record.pid); }
          catch (err) { console.log('refused ' + (err.holder?.pid ?? err.message)); }
        });`),
    );
    for (const c of contenders) expect(await nextLine(c.lines)).toBe('ready');
    for (const c of contenders) c.proc.stdin!.write('go\n');
    const outcomes = await Promise.all(contenders.map((c) => nextLine(c.lines)));
    const winners = outcomes.filter((o) => o.startsWith('won '));
    expect(winners).toHaveLength(1);
    const winnerPid = winners[0]!.slice(4);
    expect(outcomes.filter((o) => o !== winners[0])).toEqual(Array(3).fill(`refused ${winnerPid}`));
    expect(JSON.parse(await readFile(lockFile(dir), 'utf8')).pid).toBe(Number(winnerPid));
  });

  it('a recoverer killed in the middle of its recovery does not block the next one', async () => {
    const dir = await freshDir();
    const stale = await leaveLock(lockFile(dir), { pid: await deadPid() });
    await leaveLock(`${lockFile(dir)}.${stale.id}`, { pid: await deadPid(), holder: 'lock recovery', serves: false });
    const lock = await lockDataDir(dir, 'kohami-runtime', true);
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    await lock.release();
  });

  it('written by another host: refused, naming that host and the file to delete if it is gone', async () => {
    const dir = await freshDir();
    const other = await leaveLock(lockFile(dir), { host: 'kiosk-backend-2', pid: process.pid });
    const refusal = (await lockDataDir(dir, 'kohami-runtime', true).catch((err: unknown) => err)) as DataDirLockedError;
    expect(refusal).toBeInstanceOf(DataDirLockedError);
    expect(refusal.otherHost).toBe(true);
    expect(refusal.message).toBe(
      `PGLITE_DATA_DIR ${dir} is locked by kohami-runtime (pid ${process.pid} on host kiosk-backend-2, since ${other.since}), another host sharing this directory: stop it there, or if that host is gone delete ${lockFile(dir)}`,
    );
    expect(JSON.parse(await readFile(lockFile(dir), 'utf8'))).toEqual(other);
  });

  it('a lock file that is not a whole record is refused as it is, never taken for a stale one', async () => {
    const dir = await freshDir();
    await writeFile(lockFile(dir), '{"id":"0011223344556677","pid":12');
    await expect(lockDataDir(dir, 'kohami-runtime', true)).rejects.toThrow(`PGLITE_DATA_DIR ${dir} has an unreadable lock: ${lockFile(dir)} is not a lock this runtime wrote; if no kohami process uses this directory, delete it`);
    expect(await readFile(lockFile(dir), 'utf8')).toBe('{"id":"0011223344556677","pid":12');
  });

  it('release leaves alone a lock that is no longer this one', async () => {
    const dir = await freshDir();
    const lock = await lockDataDir(dir, 'kohami-runtime', true);
    const replaced = await leaveLock(lockFile(dir), { pid: process.pid });
    await lock.release();
    expect(JSON.parse(await readFile(lockFile(dir), 'utf8'))).toEqual(replaced);
    await expect(lock.publish(path.join(dir, '.s.PGSQL.5432'))).rejects.toThrow('was taken from this process');
  });
});

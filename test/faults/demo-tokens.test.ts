import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, link, lstat, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/db/database.ts';
import { migratedDataDir } from '../support/database-image.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { childEnv } from '../support/child-env.ts';
import { TEST_NODE_FLAGS } from '../support/node-flags.ts';
import { npmStart } from '../support/npm-start.ts';

/**
 * The demo tokens are the demo seed's, made by a runtime's first start on an empty database. Every
 * start here but one is on a data directory restored from the run's migrated image (`migratedDataDir`):
 * an empty database, seeded as on any first start, without the ~7 s of initdb and migrations the
 * tokens do not depend on. The first test's first directory is new, so a first start on nothing is seen too.
 */

/** `npm start`'s entry point as a child process, on a persistent data directory. */
async function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...TEST_NODE_FLAGS, 'runtime/main.ts'], {
    env: childEnv({ KOHAMI_ENV: 'development', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  // A start that succeeds is stopped as soon as its banner's last line is out, tokens or not.
  child.stdout!.on('data', () => /talk to it:|demo data:/.test(output) && child.kill('SIGTERM'));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

/** The demo tokens a banner printed. */
function printed(output: string): { senior: string; kiosk: string; admin: string } {
  return {
    senior: /demo senior:\s+Marie \((\S+)\)/.exec(output)![1]!,
    kiosk: /demo kiosk token: (kiosk_\S+)/.exec(output)![1]!,
    admin: /demo admin token: (admin_\S+)/.exec(output)![1]!,
  };
}

/** Whether `tokens` authenticate on a running runtime: the admin one over HTTP, the kiosk one on the socket. */
async function authenticate(run: { url: string; ws: string }, tokens: ReturnType<typeof printed>): Promise<void> {
  const res = await fetch(`${run.url}/v1/admin/seniors/${tokens.senior}/consents`, { headers: { authorization: `Bearer ${tokens.admin}` } });
  expect(res.status).toBe(200);
  const kiosk = await KioskClient.connect(run.ws, tokens.kiosk);
  expect(await kiosk.start()).toMatchObject({ type: 'session.ready', seniorId: tokens.senior });
  kiosk.close();
}

describe('the demo tokens', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  const tempDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-seed-'));
    dirs.push(dir);
    return dir;
  };

  it('are kept inside the data directory, mode 0600: two data directories under one parent keep their own', async () => {
    const parent = await tempDir();
    const a = await start({ PORT: '0', PGLITE_DATA_DIR: path.join(parent, 'a') });
    const b = await start({ PORT: '0', PGLITE_DATA_DIR: await migratedDataDir(path.join(parent, 'b')) });
    for (const [run, dir] of [[a, 'a'], [b, 'b']] as const) {
      const file = path.join(parent, dir, 'dev-tokens.json');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ seniorId: printed(run.output).senior, kioskToken: printed(run.output).kiosk, adminToken: printed(run.output).admin });
    }
    expect(printed(a.output).admin).not.toBe(printed(b.output).admin);
    // Each restart prints its own directory's tokens.
    expect(printed((await start({ PORT: '0', PGLITE_DATA_DIR: path.join(parent, 'a') })).output)).toEqual(printed(a.output));
  }, 120_000);

  it('are never written into a file someone else made there: a symlink is refused, a file readable by others replaced, not written into', async () => {
    const dir = await tempDir();
    const elsewhere = path.join(dir, 'theirs.json');
    await writeFile(elsewhere, 'theirs');

    // A symbolic link: refused — the banner prints the tokens once, says why, and the link is left as it was.
    const linked = await migratedDataDir(path.join(dir, 'link'));
    await symlink(elsewhere, path.join(linked, 'dev-tokens.json'));
    const run = await start({ PORT: '0', PGLITE_DATA_DIR: linked });
    const tokens = printed(run.output);
    const refusal = run.output.split('\n').find((l) => l.includes('is not this runtime'))!;
    expect(refusal).toContain(`${path.join(linked, 'dev-tokens.json')} is not this runtime's (a symbolic link)`);
    expect(refusal).not.toContain(tokens.admin);
    expect(await readlink(path.join(linked, 'dev-tokens.json'))).toBe(elsewhere);
    expect(await readFile(elsewhere, 'utf8')).toBe('theirs');

    // A file readable by others, which someone holds another name of: the tokens go to a fresh 0600 file put in its place.
    const open = await migratedDataDir(path.join(dir, 'open'));
    const planted = path.join(open, 'dev-tokens.json');
    await writeFile(elsewhere, 'theirs');
    await link(elsewhere, planted);
    await chmod(planted, 0o644);
    const second = printed((await start({ PORT: '0', PGLITE_DATA_DIR: open })).output);
    expect(await readFile(elsewhere, 'utf8')).toBe('theirs');
    expect((await lstat(planted)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(planted, 'utf8'))).toMatchObject({ kioskToken: second.kiosk, adminToken: second.admin });
  }, 180_000);

  it('a restart prints tokens the database knows — fresh ones when it no longer knows the kept ones — and they authenticate', async () => {
    const dataDir = await migratedDataDir(path.join(await tempDir(), 'pglite'));
    const first = printed((await start({ PORT: '0', PGLITE_DATA_DIR: dataDir })).output);
    // The kept tokens are revoked behind the file's back (a restored database would do the same).
    const db = await openDatabase({ pgliteDataDir: dataDir });
    try {
      await db.pool.query('DELETE FROM devices');
      await db.pool.query('DELETE FROM api_tokens');
    } finally {
      await db.close();
    }
    const run = await npmStart({ KOHAMI_ENV: 'development', LOG_LEVEL: 'warn', PORT: '0', PGLITE_DATA_DIR: dataDir });
    try {
      const now = printed(run.output());
      expect(now.senior).toBe(first.senior);
      expect(now.kiosk).not.toBe(first.kiosk);
      await authenticate(run, now);
      // The port is not the default: the banner's kiosk command says where to connect.
      expect(run.output()).toContain(`talk to it:       npm run kiosk -- --url ${run.ws} --token ${now.kiosk}`);
      expect(JSON.parse(await readFile(path.join(dataDir, 'dev-tokens.json'), 'utf8'))).toEqual({ seniorId: now.senior, kioskToken: now.kiosk, adminToken: now.admin });
    } finally {
      run.signalGroup('SIGTERM');
      await run.closed;
    }
    // Restarted again, it prints the same ones, still known.
    const again = await npmStart({ KOHAMI_ENV: 'development', LOG_LEVEL: 'warn', PORT: '0', PGLITE_DATA_DIR: dataDir });
    try {
      expect(printed(again.output())).toEqual(printed(run.output()));
      await authenticate(again, printed(again.output()));
    } finally {
      again.signalGroup('SIGTERM');
      await again.closed;
    }
  }, 180_000);

  it('survive a first start that seeds and then fails on a busy port: the next start prints them', async () => {
    const dataDir = await migratedDataDir(path.join(await tempDir(), 'pglite'));
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const port = String((busy.address() as AddressInfo).port);
    try {
      const failed = await start({ PORT: port, PGLITE_DATA_DIR: dataDir });
      expect(failed.code).toBe(1);
      expect(failed.output).toContain('failed to start');
    } finally {
      busy.close();
    }

    const next = await start({ PORT: '0', PGLITE_DATA_DIR: dataDir });
    expect(next.output).toMatch(/demo kiosk token: kiosk_\S+/);
    expect(next.output).toMatch(/demo admin token: admin_\S+/);
    expect(next.output).not.toContain('already seeded');
  }, 120_000);
});

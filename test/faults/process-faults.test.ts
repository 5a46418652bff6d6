import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../runtime/db/data-dir-lock.ts';
import { POOL_WAIT_MS } from '../../runtime/db/database.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { childEnv } from '../support/child-env.ts';
import { TEST_NODE_FLAGS } from '../support/node-flags.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * A test that starts runtimes or commands as child processes waits, in real time, for each to load
 * its TypeScript and open PGlite: seconds when the machine is idle, much more when it is loaded. Every wait in
 * these tests is on an event (a banner, an exit); this bounds the whole, as in npm-start-signals.
 */
const CHILD_PROCESS_TEST_MS = 120_000;

let dir: string;
const env = () => childEnv({ KOHAMI_ENV: 'test', PORT: '0', LOG_LEVEL: 'warn', PGLITE_DATA_DIR: dir, DEV_KIOSK_TOKEN: KIOSK_TOKEN, DEV_ADMIN_TOKEN: ADMIN_TOKEN });

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm start`'s entry point as a real child process on `dir`. */
function spawnRuntime(): Proc {
  const child = spawn(process.execPath, [...TEST_NODE_FLAGS, 'runtime/main.ts'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, output: () => out, exited: once(child, 'exit').then(([code]) => code as number | null) };
}

/** A runtime that has printed its banner; its base URL. */
async function startRuntime(): Promise<Proc & { url: string }> {
  const proc = spawnRuntime();
  await new Promise<void>((resolve, reject) => {
    const check = () => proc.output().includes('kiosk WebSocket') && resolve();
    proc.child.stdout!.on('data', check);
    void proc.exited.then((code) => reject(new Error(`runtime exited ${code}:\n${proc.output()}`)));
  });
  return { ...proc, url: /listening on (\S+)/.exec(proc.output())![1]! };
}

const run = promisify(execFile);
/** `npm run cli -- …` as a real child process on `dir`. */
async function cli(...args: string[]): Promise<string> {
  return (await run(process.execPath, [...TEST_NODE_FLAGS, 'runtime/cli/admin.ts', ...args], { env: env() })).stdout;
}
const value = (out: string, prefix: string) => out.split('\n').find((l) => l.startsWith(prefix))!.slice(prefix.length);

const api = (rt: { url: string }, token: string) => (method: string, route: string) =>
  fetch(`${rt.url}${route}`, { method, headers: { authorization: `Bearer ${token}` } });
const lockHolder = async () => JSON.parse(await readFile(path.join(dir, LOCK_FILE), 'utf8')) as { pid: number; socket: string };

let runtime: Proc & { url: string };
let senior: string;
let admin: string;
let caregiver: string;

beforeAll(async () => {
  dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-process-')), 'pglite');
  runtime = await startRuntime();
}, CHILD_PROCESS_TEST_MS);
afterAll(async () => {
  if (runtime && runtime.child.exitCode === null) {
    runtime.child.kill('SIGTERM');
    await runtime.exited;
  }
});

describe('one owner per data directory, with real processes', () => {
  it('a second runtime on the same directory exits 1 at once with one line naming it and the holder; the first keeps serving', async () => {
    // PGlite created its files around the lock, which was there first.
    await access(path.join(dir, 'PG_VERSION'));
    expect((await lockHolder()).pid).toBe(runtime.child.pid);

    const second = spawnRuntime();
    expect(await second.exited).toBe(1);
    expect(second.output().trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^kohami-runtime failed to start: PGLITE_DATA_DIR ${dir} is in use by kohami-runtime \\(pid ${runtime.child.pid} on host ${hostname()}, since [0-9T:.-]+Z\\): one process owns an embedded database; stop it first or set another PGLITE_DATA_DIR$`),
      ),
    ]);
    expect((await fetch(`${runtime.url}/ready`)).status).toBe(200);
    expect((await lockHolder()).pid).toBe(runtime.child.pid);
  }, CHILD_PROCESS_TEST_MS);

  it('the CLI while the runtime runs: what it creates goes into the runtime’s database and survives SIGTERM and a restart', async () => {
    senior = value(await cli('senior:create', '--name', 'Jeanne Martin', '--onboarded'), 'senior: ');
    admin = value(await cli('token:create', '--role', 'admin', '--label', 'ops'), 'admin token: ');
    const created = await cli('token:create', '--role', 'caregiver', '--label', 'Claire (fille)');
    caregiver = value(created, 'caregiver token: ');
    await cli('caregiver:link', '--caregiver', value(created, 'caregiver token id: '), '--senior', senior);
    expect((await api(runtime, admin)('GET', `/v1/admin/seniors/${senior}/consents`)).status).toBe(200);

    runtime.child.kill('SIGTERM');
    expect(await runtime.exited).toBe(0);
    await expect(access(path.join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });

    runtime = await startRuntime();
    const consents = await api(runtime, admin)('GET', `/v1/admin/seniors/${senior}/consents`);
    expect(consents.status).toBe(200);
    expect(await consents.json()).toMatchObject({ seniorId: senior });
    expect((await api(runtime, caregiver)('GET', `/v1/admin/seniors/${senior}/mood-timeline`)).status).toBe(200);
  }, CHILD_PROCESS_TEST_MS);

  it('kill -9, then a restart on the same data: it starts at once and what was confirmed before the kill is there', async () => {
    expect((await api(runtime, admin)('PUT', `/v1/admin/seniors/${senior}/consents/profil`)).status).toBe(200);
    const killed = runtime.child.pid;
    runtime.child.kill('SIGKILL');
    await runtime.exited;
    expect((await lockHolder()).pid).toBe(killed);

    runtime = await startRuntime();
    expect((await lockHolder()).pid).toBe(runtime.child.pid);
    const consents = (await (await api(runtime, admin)('GET', `/v1/admin/seniors/${senior}/consents`)).json()) as { consents: Array<{ category: string; active: boolean }> };
    expect(consents.consents).toContainEqual(expect.objectContaining({ category: 'profil', active: true }));
  }, CHILD_PROCESS_TEST_MS);
});

describe('the embedded database worker dies under a running runtime', () => {
  // What waiting on the dead database would take is the pool's wait for a connection: failing fast is far
  // under it, however loaded the machine (1 s here failed at load 11: 1,451 ms).
  const FAIL_FAST_MS = POOL_WAIT_MS / 3;
  let rt: TestRuntime;
  let kiosk: KioskClient;
  beforeAll(async () => {
    rt = await startTestRuntime();
    kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    await kiosk.start();
    await rt.db.thread!.terminate();
  }, 60_000);
  afterAll(() => kiosk?.close());

  it('logs fatal, /ready answers 503 at once, requests fail fast, a live kiosk’s turn is still answered, and close does not hang', async () => {
    await expect.poll(() => rt.logs.lines.some((l) => l.includes('"level":60') && l.includes('ERR_DATABASE_THREAD_EXITED'))).toBe(true);

    let started = Date.now();
    const ready = await fetch(`${rt.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', reason: 'database unreachable' });
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);

    started = Date.now();
    const seniorId = kiosk.frames.find((f) => f.type === 'session.ready')!.seniorId as string;
    const consents = await fetch(`${rt.url}/v1/admin/seniors/${seniorId}/consents`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(consents.status).toBeGreaterThanOrEqual(500);
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);

    // Recall fails and is skipped: the senior still hears a reply.
    const done = await kiosk.turn('t1', 'je me sens un peu seule aujourd’hui');
    expect(done).toMatchObject({ type: 'reply.done', text: expect.stringMatching(/\S/) });
    // A kiosk that connects now cannot be authenticated: refused at once, not left waiting.
    started = Date.now();
    await expect(KioskClient.connect(rt.wsUrl, KIOSK_TOKEN)).rejects.toMatchObject({ statusCode: 503 });
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);

    started = Date.now();
    await rt.close();
    expect(Date.now() - started).toBeLessThan(POOL_WAIT_MS);
  });
});

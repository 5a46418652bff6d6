import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { KioskClient, type KioskClientEvents } from '../src/index.ts';
import { wsSocket } from '../src/node.ts';
import { migratedDataDir } from '../../../test/support/database-image.ts';
import { KIOSK_TOKEN } from '../../../test/support/runtime.ts';
import { freePort } from '../../../test/support/load-balancer.ts';
import { startupAllowanceMs } from '../../../test/support/manifests.ts';
import { runtimeProcess, type RuntimeProcess } from '../../../test/support/runtime-process.ts';

/**
 * A kiosk on the client's defaults through a real runtime restart: the runtime process (`npm start`'s
 * entry, embedded PGlite in a data directory) is stopped, stays down through minutes of the client's
 * clock (fake timers in this process: each attempt meets the closed port for real), and starts again
 * on the same port and data directory. The kiosk comes back by itself, on a new session (the old one
 * ended with the process), and is answered.
 */
const OUTAGE_MS = 3 * 60_000;
/** Two starts of the runtime, each within what the deployment allows, and a minute for the rest. */
const TEST_MS = 2 * startupAllowanceMs() + 60_000;
let dir: string | undefined;
let runtime: RuntimeProcess | undefined;
let client: KioskClient | undefined;

afterAll(async () => {
  vi.useRealTimers();
  client?.close();
  await runtime?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const next = <E extends keyof KioskClientEvents & string>(c: KioskClient, event: E) => new Promise<KioskClientEvents[E]>((resolve) => c.once(event, resolve));

describe('a runtime restart', () => {
  it('the kiosk stays offline only while the runtime is down, then starts a new session on its own', async () => {
    // Restored from the run's migrated image: the restart is the subject here, not a first start's initdb.
    dir = await migratedDataDir(await mkdtemp(path.join(tmpdir(), 'kohami-restart-')));
    const env = { PORT: String(await freePort()), PGLITE_DATA_DIR: dir };
    // No DATABASE_URL (empty is unset): the embedded database in `dir`.
    runtime = await runtimeProcess('', env);
    const c = (client = new KioskClient({ url: runtime.ws, token: KIOSK_TOKEN, socket: wsSocket(WebSocket), random: () => 0.5 }));
    const before = await c.connect();
    expect((await c.turn('Bonjour').reply).type).toBe('reply.done');

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const gaveUp = next(c, 'client.closed').then((e) => Promise.reject(new Error(`the client gave up: ${e.error?.message}`)));
    let reconnecting = next(c, 'client.reconnecting');
    const closed = next(c, 'session.closed');
    await runtime.stop();
    expect((await closed).reason).toBe('shutdown');
    const lostAt = Date.now();
    let attempts = 0;
    while (Date.now() - lostAt < OUTAGE_MS) {
      const { delayMs } = await Promise.race([reconnecting, gaveUp]);
      attempts += 1;
      reconnecting = next(c, 'client.reconnecting');
      await vi.advanceTimersByTimeAsync(delayMs);
      expect(c.state).toBe('reconnecting');
    }
    // Past the old defaults' bounds (10 attempts, 30 s) and still trying.
    expect(attempts).toBeGreaterThan(10);

    runtime = await runtimeProcess('', env);
    const ready = next(c, 'session.ready');
    const { delayMs } = await Promise.race([reconnecting, gaveUp]);
    await vi.advanceTimersByTimeAsync(delayMs);
    const after = await Promise.race([ready, gaveUp]);
    expect(after.resumed).toBe(false);
    expect(after.sessionId).not.toBe(before.sessionId);
    expect(c.state).toBe('ready');
    vi.useRealTimers();
    expect((await c.turn('Bonjour').reply).type).toBe('reply.done');
  }, TEST_MS);
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** `npm start`'s entry point as a child process, on a persistent data directory. */
async function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['runtime/main.ts'], {
    env: { PATH: process.env.PATH ?? '', KOHAMI_ENV: 'development', LOG_LEVEL: 'warn', ...env },
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

describe('the demo tokens', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('survive a first start that seeds and then fails on a busy port: the next start prints them', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-seed-'));
    dirs.push(dir);
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const port = String((busy.address() as AddressInfo).port);
    try {
      const failed = await start({ PORT: port, PGLITE_DATA_DIR: path.join(dir, 'pglite') });
      expect(failed.code).toBe(1);
      expect(failed.output).toContain('failed to start');
    } finally {
      busy.close();
    }

    const next = await start({ PORT: '0', PGLITE_DATA_DIR: path.join(dir, 'pglite') });
    expect(next.output).toMatch(/demo kiosk token: kiosk_\S+/);
    expect(next.output).toMatch(/demo admin token: admin_\S+/);
    expect(next.output).not.toContain('already seeded');
  }, 120_000);
});

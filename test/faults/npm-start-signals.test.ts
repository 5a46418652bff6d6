import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { KioskClient } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN } from '../support/runtime.ts';

/**
 * Containers and systemd signal the process they started — here `npm start` itself. The runtime must
 * get that signal: drain, tell its kiosks, and exit, rather than run on under init once npm is gone.
 */
describe('npm start', () => {
  it('hands SIGTERM to the runtime: the kiosk hears session.closed {shutdown} and nothing outlives npm', async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', KOHAMI_ENV: 'test', PGLITE_DATA_DIR: 'memory://', PORT: '0', LOG_LEVEL: 'warn', DEV_KIOSK_TOKEN: KIOSK_TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d) => (out += d));
    npm.stderr!.on('data', (d) => (out += d));
    // 'close' fires once every holder of npm's pipes is gone: an orphaned runtime would keep it open.
    const closed = once(npm, 'close');
    // Its banner, however long npm, Node and PGlite take to load on a loaded machine; an npm that exits first fails here.
    await new Promise<void>((resolve, reject) => {
      const check = () => out.includes('demo kiosk token') && resolve();
      npm.stdout!.on('data', check);
      npm.once('exit', (code) => reject(new Error(`npm start exited ${code} before its banner:\n${out}`)));
      check();
    });
    const ws = /kiosk WebSocket:\s+(\S+)/.exec(out)![1]!;
    const kiosk = await KioskClient.connect(ws, KIOSK_TOKEN);
    await kiosk.start();

    npm.kill('SIGTERM');
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'shutdown' });
    await closed;
    await expect(KioskClient.connect(ws, KIOSK_TOKEN)).rejects.toThrow();
  }, 120_000);
});

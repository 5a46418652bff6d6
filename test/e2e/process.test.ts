import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migratedDataDir } from '../support/database-image.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { startupAllowanceMs } from '../support/manifests.ts';
import { childEnv } from '../support/child-env.ts';
import { TEST_NODE_FLAGS } from '../support/node-flags.ts';
import { KIOSK_TOKEN } from '../support/runtime.ts';

/** `npm start`'s entry point, as a real child process. */
function startProcess(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [...TEST_NODE_FLAGS, 'runtime/main.ts'], {
    env: childEnv({ KOHAMI_ENV: 'test', PGLITE_DATA_DIR: 'memory://', LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, output: () => out };
}

describe('the runtime process', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  /** A data directory restored from the run's migrated image: no test here is about a first start's initdb and migrations. */
  const dataDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-process-'));
    dirs.push(dir);
    return migratedDataDir(path.join(dir, 'pglite'));
  };

  it('refuses an invalid variable with one clear line and exit code 1', async () => {
    const { child, output } = startProcess({ TURN_BUDGET_MS: 'soon' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output().trim().split('\n')).toEqual([expect.stringContaining('TURN_BUDGET_MS')]);
  });

  it('prints where to connect, then on SIGTERM closes live sessions and exits 0', async () => {
    const { child, output } = startProcess({ PORT: '0', PGLITE_DATA_DIR: await dataDir(), DEV_KIOSK_TOKEN: KIOSK_TOKEN });
    await expect.poll(output, { timeout: startupAllowanceMs(), interval: 100 }).toContain('demo kiosk token');
    expect(output()).toContain(`demo kiosk token: ${KIOSK_TOKEN}`);
    expect(output()).toContain('models:           OFFLINE');
    const ws = /kiosk WebSocket:\s+(\S+)/.exec(output())![1]!;

    const kiosk = await KioskClient.connect(ws, KIOSK_TOKEN);
    await kiosk.start();
    expect(await kiosk.turn('p1', 'je me sens un peu seule')).toMatchObject({ flux: 'agent' });
    const started = Date.now();
    child.kill('SIGTERM');
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'shutdown' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses to start with a MISTRAL_TTS_VOICE the speech service does not list, naming the voices it lists', async () => {
    const voxtral = new FakeVoxtral();
    const mistral = await new FakeMistral(voxtral).start();
    try {
      const { child, output } = startProcess({ PGLITE_DATA_DIR: await dataDir(), MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, MISTRAL_TTS_VOICE: 'fr_inconnu' });
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(output()).toContain('kohami-runtime failed to start: MISTRAL_TTS_VOICE "fr_inconnu" is not a voice the speech service lists');
      expect(output()).toContain(`the voices it lists: ${voxtral.voices.join(', ')}`);
      expect(output()).not.toContain('test-key');
    } finally {
      await mistral.stop();
      await voxtral.stop();
    }
  }, 60_000);
});

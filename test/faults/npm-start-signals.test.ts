import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/db/database.ts';
import { migratedDataDir } from '../support/database-image.ts';
import { FakeMistral, subagentAnswers } from '../support/fake-mistral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { npmStart } from '../support/npm-start.ts';
import { KIOSK_TOKEN } from '../support/runtime.ts';

const env = { KOHAMI_ENV: 'test', PORT: '0', LOG_LEVEL: 'warn', DEV_KIOSK_TOKEN: KIOSK_TOKEN };

/**
 * Containers and systemd signal the process they started — here `npm start` itself — and a terminal's
 * Ctrl-C or systemd's control-group kill signal its whole process group. The runtime must get the signal,
 * drain, tell its kiosks, and exit, rather than run on under init once npm is gone or die at npm's
 * forwarded copy of the signal it already had.
 */
describe('npm start', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  /** A data directory restored from the run's migrated image: signals are the subject, not a first start's initdb and migrations. */
  const dataDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-signals-'));
    dirs.push(dir);
    return migratedDataDir(path.join(dir, 'pglite'));
  };

  it('hands SIGTERM to the runtime: the kiosk hears session.closed {shutdown} and nothing outlives npm', async () => {
    const npm = await npmStart({ ...env, PGLITE_DATA_DIR: await dataDir() });
    try {
      const kiosk = await KioskClient.connect(npm.ws, KIOSK_TOKEN);
      await kiosk.start();

      npm.npm.kill('SIGTERM');
      expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'shutdown' });
      await npm.closed;
      await expect(KioskClient.connect(npm.ws, KIOSK_TOKEN)).rejects.toThrow();
    } finally {
      if (npm.npm.exitCode === null) npm.signalGroup('SIGKILL');
    }
  }, 120_000);

  it('a SIGTERM to its process group (the runtime gets it twice) drains: every derivation in flight is written', async () => {
    const pglite = await dataDir();
    const fake = await new FakeMistral().start();
    fake.generate = subagentAnswers({ score: 35 });
    // Slow sub-agents, under their bound: the turns' mood calls are still unanswered when the signal comes.
    fake.generateLatencyMs = 2_500;
    const npm = await npmStart({ ...env, PGLITE_DATA_DIR: pglite, MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: fake.baseUrl });
    try {
      const kiosk = await KioskClient.connect(npm.ws, KIOSK_TOKEN);
      await kiosk.start();
      const turns = ['il pleut depuis ce matin', 'ma fille vient dimanche', 'j’ai mal dormi cette nuit'];
      for (const [i, t] of turns.entries()) await kiosk.turn(`t${i}`, t);
      // Each turn's mood job asks two calls (score, summary): all six have arrived.
      const subagentCalls = () => fake.requests.filter((r) => !r.path.endsWith('/embeddings') && r.body.stream !== true).length;
      await expect.poll(subagentCalls, { timeout: 30_000 }).toBeGreaterThanOrEqual(2 * turns.length);
      const unansweredAtSignal = subagentCalls() - fake.generateLog.length;

      npm.signalGroup('SIGTERM');
      expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'shutdown' });
      await npm.closed;
      expect(unansweredAtSignal).toBeGreaterThan(0);
      expect(npm.npm.exitCode).toBe(0);
      expect(npm.output()).not.toContain('derivations are lost');
    } finally {
      if (npm.npm.exitCode === null) npm.signalGroup('SIGKILL');
      await fake.stop();
    }

    // Restarted on the same data directory: one mood entry per turn, and the session's segment.
    const reopened = await openDatabase({ pgliteDataDir: pglite });
    try {
      expect((await reopened.pool.query('SELECT count(*)::int AS n FROM mood_scores')).rows[0].n).toBe(3);
      expect((await reopened.pool.query('SELECT count(*)::int AS n FROM segments')).rows[0].n).toBe(1);
    } finally {
      await reopened.close();
    }
  }, 120_000);

  it('SIGQUIT is the deliberate stop-now: the drain is cut short, its pending derivations counted as lost', async () => {
    const fake = await new FakeMistral().start();
    fake.generate = subagentAnswers({ score: 35 });
    fake.generateLatencyMs = 3_500;
    // At info, the drain's beginning is logged.
    const npm = await npmStart({ ...env, LOG_LEVEL: 'info', PGLITE_DATA_DIR: await dataDir(), MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: fake.baseUrl });
    try {
      const kiosk = await KioskClient.connect(npm.ws, KIOSK_TOKEN);
      await kiosk.start();
      await kiosk.turn('t0', 'il pleut depuis ce matin');
      await expect.poll(() => fake.requests.filter((r) => r.body.stream !== true && !r.path.endsWith('/embeddings')).length, { timeout: 30_000 }).toBe(2);
      npm.signalGroup('SIGTERM');
      await expect.poll(() => npm.output(), { timeout: 30_000 }).toContain('draining the derivations');
      npm.signalGroup('SIGQUIT');
      await npm.closed;
      expect(fake.generateLog).toEqual([]);
      const line = npm.output().split('\n').find((l) => l.includes('stopping now'))!;
      expect(JSON.parse(line)).toMatchObject({ pending: expect.any(Number) });
      expect(JSON.parse(line).pending).toBeGreaterThan(0);
    } finally {
      if (npm.npm.exitCode === null) npm.signalGroup('SIGKILL');
      await fake.stop();
    }
  }, 120_000);
});

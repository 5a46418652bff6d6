import { PgBoss } from 'pg-boss';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { SENIOR_QUEUE } from '../../runtime/jobs/dream-scheduler.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/**
 * A nightly consolidation held by a process killed with -9 (issue 24: one stayed stuck 24 min) is
 * taken back at its expiry and run by another process on the same database. Short settings here; the
 * defaults (docs/configuration.md) bound it under 8 minutes.
 */
const JOB_TIMING = { DREAM_JOB_EXPIRE_S: '2', DREAM_JOB_RETRY_DELAY_S: '1', DREAM_JOB_MAINTENANCE_S: '1' };

let db: SharedDatabase;
let pool: pg.Pool;
let fake: FakeMistral;
let holder: RuntimeProcess;
let survivor: RuntimeProcess | undefined;
let boss: PgBoss;

beforeAll(async () => {
  db = await sharedDatabase();
  fake = await new FakeMistral().start();
  // The holder's Mistral never answers: its consolidation is in flight when it is killed.
  fake.mode = { kind: 'hang' };
  holder = await runtimeProcess(db.url, { ...JOB_TIMING, MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: fake.baseUrl });
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // Only sends and reads jobs: no maintenance, no schedule of its own.
  boss = new PgBoss({ db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) }, supervise: false, schedule: false });
  await boss.start();
}, 90_000);
afterAll(async () => {
  await boss?.stop({ graceful: false, timeout: 2000 });
  for (const p of [holder, survivor]) await p?.stop();
  await pool?.end();
  await fake?.stop();
  await db?.stop();
}, 60_000);

describe('a dream job held by a killed process', () => {
  it('expires and is run by another process', async () => {
    const directory = new SeniorDirectory(pool);
    const senior = await directory.createSenior({ displayName: 'Jeanne', preferredName: 'Jeanne', onboardingDone: true });
    await new PgConsentAdapter(pool).grant(senior, 'conversation');
    // A note of yesterday: the consolidation has something to read, so it calls Mistral Small.
    await new PgMoodScoresRepository(pool).insert({ seniorId: senior, score: 60, tier: 'neutre', summary: 'Le senior a parlé de sa fille.', recordedAt: new Date(Date.now() - 86_400_000) });
    const jobId = (await boss.send(SENIOR_QUEUE, { seniorId: senior }))!;

    const state = async () => (await boss.getJobById(SENIOR_QUEUE, jobId))?.state;
    await expect.poll(state, { timeout: 30_000 }).toBe('active');
    // The holder is in its call to Mistral Small for this job.
    await expect.poll(() => fake.open.chat, { timeout: 30_000 }).toBeGreaterThan(0);
    holder.child.kill('SIGKILL');
    await new Promise((resolve) => holder.child.once('exit', resolve));

    survivor = await runtimeProcess(db.url, JOB_TIMING);
    // Expiry (2 s) + supervision (1 s) + retry delay (1–2 s) + pg-boss's 2 s polling, on a busy machine.
    await expect.poll(state, { timeout: 60_000, interval: 500 }).toBe('completed');
    const job = (await boss.getJobById(SENIOR_QUEUE, jobId))!;
    expect(job.retryCount).toBeGreaterThanOrEqual(1);
    const runs = await pool.query('SELECT count(*)::int AS n FROM consolidation_runs WHERE senior_id = $1', [senior]);
    expect(runs.rows[0].n).toBe(1);
  }, 120_000);
});

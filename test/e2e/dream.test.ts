import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDreamRepository } from '../../adapters/postgres/pg-dream.repository.ts';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import { PgSegmentsRepository } from '../../adapters/postgres/pg-segments.repository.ts';
import { MistralSmallConsolidator, type Consolidation } from '../../adapters/subagents/mistral-small-consolidator.ts';
import { SWEEP_CRON, SWEEP_QUEUE } from '../../runtime/jobs/caregiver-alerts.ts';
import { Dream } from '../../runtime/jobs/dream.ts';
import { DREAM_TIMEZONE, NIGHTLY_CRON, NIGHTLY_QUEUE, SENIOR_QUEUE } from '../../runtime/jobs/dream-scheduler.ts';
import { migratedDataDir } from '../support/database-image.ts';
import { scriptedModel } from '../support/models.ts';
import { childEnv } from '../support/child-env.ts';
import { TEST_NODE_FLAGS } from '../support/node-flags.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const proposal = (patterns: Consolidation['patterns']): Consolidation => ({
  patterns,
  hypotheses: ['Elle se sent peut-être seule le soir.'],
  continuity: ['La chorale reprend jeudi.'],
  nextSession: { resumeWith: 'la chorale de jeudi', questionsToAsk: ['Comment va Claire ?'], avoid: ['la santé de son mari'] },
  compass: { uncertainties: ['sa vue baisse-t-elle ?'], tone: 'chaleureux et lent', topicsToExplore: ['ses années d’institutrice'] },
  interlocutor: { role: 'ancienne institutrice', interests: ['chorale'], recurringTopics: ['sa fille Claire'], patterns: ['appelle Claire le dimanche'] },
});
const sunday = { pattern: 'Elle appelle sa fille Claire le dimanche', category: 'contacts' as const };

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ dreamScheduler: true });
});
afterAll(() => rt.close());

async function seniorWithWeek(consents = ['conversation', 'contacts']) {
  const id = await rt.directory.createSenior({ displayName: 'Jeanne', preferredName: 'Jeanne', onboardingDone: true });
  for (const c of consents) await rt.consents.grant(id, c as 'conversation');
  for (let d = 1; d <= 3; d++) {
    await rt.moodScores.insert({ seniorId: id, score: 60, tier: 'neutre', summary: `Le senior a parlé de sa fille, jour ${d}.`, recordedAt: new Date(`2026-11-2${d}T10:00:00Z`) });
  }
  return id;
}
/** The runtime's dream, with a scripted Mistral Small in place of the offline one. */
const dreamWith = (model: ReturnType<typeof scriptedModel>) =>
  new Dream({
    store: new PgDreamRepository(rt.db.pool),
    moodScores: rt.moodScores,
    segments: new PgSegmentsRepository(rt.db.pool),
    facts: new PgMemoryFactsRepository(rt.db.pool),
    consents: rt.consents,
    memory: rt.memory.memory,
    embedder: rt.embedder,
    profiles: new PgProfilesRepository(rt.db.pool),
    consolidator: new MistralSmallConsolidator(model),
  });

describe('the nightly dream', () => {
  it('writes the compass and enriches the interlocutor profile, and keeps a new pattern as a candidate', async () => {
    const id = await seniorWithWeek();
    const report = await dreamWith(scriptedModel({ json: proposal([sunday]) })).consolidate(id, '2026-11-24');
    expect(report).toMatchObject({ promoted: [], candidates: 1, compassWritten: true, profileEnriched: true });
    const profile = await (await fetch(`${rt.url}/v1/admin/seniors/${id}/profile`, { headers: { authorization: `Bearer ${rt.seed!.adminToken}` } })).json();
    expect(profile).toMatchObject({
      compass: { resumeWith: 'la chorale de jeudi', avoid: ['la santé de son mari'], tone: 'chaleureux et lent' },
      interlocutor: { role: 'ancienne institutrice', interests: ['chorale'], recurringTopics: ['sa fille Claire'] },
    });
  });

  it('promotes a pattern seen on 3 days within 7 to a durable, recallable fact', async () => {
    const id = await seniorWithWeek();
    const model = scriptedModel({ json: proposal([sunday]) });
    for (const day of ['2026-11-24', '2026-11-25']) expect((await dreamWith(model).consolidate(id, day)).promoted).toEqual([]);
    expect((await dreamWith(model).consolidate(id, '2026-11-26')).promoted).toEqual([sunday.pattern]);
    expect((await rt.memory.memory.search('le dimanche', id, 5)).map((f) => f.content)).toContain(sunday.pattern);
    const left = await rt.db.pool.query('SELECT count(*)::int AS n FROM consolidation_candidates WHERE senior_id = $1', [id]);
    expect(left.rows[0].n).toBe(0);
  });

  it('is idempotent: a second run the same day changes nothing', async () => {
    const id = await seniorWithWeek();
    const model = scriptedModel({ json: proposal([sunday]) });
    await dreamWith(model).consolidate(id, '2026-11-24');
    const again = await dreamWith(model).consolidate(id, '2026-11-24');
    expect(again.skipped).toBe('already ran today');
    expect(model.doGenerateCalls).toHaveLength(1);
    const candidate = await rt.db.pool.query('SELECT array_length(seen_on, 1) AS n FROM consolidation_candidates WHERE senior_id = $1', [id]);
    expect(candidate.rows[0].n).toBe(1);
  });

  it('is gated by the conversation consent', async () => {
    const id = await seniorWithWeek(['contacts']);
    const model = scriptedModel({ json: proposal([sunday]) });
    expect((await dreamWith(model).consolidate(id, '2026-11-24')).skipped).toBe('no consent');
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it('purges notes older than 30 days and vectorizes segments beyond the 3 most recent', async () => {
    const id = await seniorWithWeek();
    await rt.moodScores.insert({ seniorId: id, score: 40, tier: 'melancolique', summary: 'Une vieille note.', recordedAt: new Date('2026-10-01T10:00:00Z') });
    for (let i = 1; i <= 5; i++) {
      await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, $2, $3, $3, 3)`, [id, `Séance ${i}.`, `2026-11-0${i}T10:00:00Z`]);
    }
    const report = await dreamWith(scriptedModel({ json: proposal([]) })).consolidate(id, '2026-11-24');
    expect(report).toMatchObject({ notesPurged: 1, segmentsVectorized: 2 });
    const old = await rt.db.pool.query('SELECT summary FROM mood_scores WHERE senior_id = $1 AND recorded_at < $2', [id, '2026-10-02']);
    expect(old.rows).toEqual([{ summary: null }]);
    const vectors = await rt.db.pool.query('SELECT summary, embedding_model FROM segments WHERE senior_id = $1 AND embedding IS NOT NULL ORDER BY ended_at', [id]);
    expect(vectors.rows).toEqual([
      { summary: 'Séance 1.', embedding_model: rt.embedder.modelId },
      { summary: 'Séance 2.', embedding_model: rt.embedder.modelId },
    ]);
  });
});

describe('the schedule', () => {
  it('registers the nightly job at 03:00 Europe/Paris with pg-boss (beside the caregiver alerts’ morning sweep)', async () => {
    const schedules = await rt.dreams.boss.getSchedules();
    expect(schedules).toHaveLength(2);
    expect(schedules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: NIGHTLY_QUEUE, cron: NIGHTLY_CRON, timezone: DREAM_TIMEZONE }),
        expect.objectContaining({ name: SWEEP_QUEUE, cron: SWEEP_CRON, timezone: DREAM_TIMEZONE }),
      ]),
    );
  });

  it('enqueues one job per senior active in the last 7 days, carrying ids only', async () => {
    const active = await rt.directory.createSenior({ displayName: 'Active' });
    await rt.moodScores.insert({ seniorId: active, score: 50, tier: 'neutre', summary: null, recordedAt: new Date() });
    const quiet = await rt.directory.createSenior({ displayName: 'Quiet' });
    await rt.moodScores.insert({ seniorId: quiet, score: 50, tier: 'neutre', summary: null, recordedAt: new Date(Date.now() - 10 * 86_400_000) });
    const seniors = await rt.dreams.enqueueActiveSeniors();
    expect(seniors).toContain(active);
    expect(seniors).not.toContain(quiet);
    const jobs = await rt.db.pool.query(`SELECT data FROM pgboss.job WHERE name = $1`, [SENIOR_QUEUE]);
    expect(jobs.rows.map((r) => r.data)).toContainEqual({ seniorId: active });
    expect(jobs.rows.every((r) => Object.keys(r.data).join() === 'seniorId')).toBe(true);
  });
});

describe('npm run dream', () => {
  it('runs one consolidation and prints what it did; refuses a bad senior id', async () => {
    const run = promisify(execFile);
    // A migrated database, as a runtime's first start leaves it: the command's subject is the consolidation, not initdb.
    const env = childEnv({ KOHAMI_ENV: 'test', PGLITE_DATA_DIR: await migratedDataDir(path.join(await mkdtemp(path.join(tmpdir(), 'dream-')), 'pglite')) });
    const { stdout } = await run(process.execPath, [...TEST_NODE_FLAGS, 'runtime/cli/dream.ts', '--senior', '00000000-0000-4000-8000-000000000000'], { env });
    expect(stdout).toContain('skipped (no consent)');
    await expect(run(process.execPath, ['runtime/cli/dream.ts', '--senior', 'nope'], { env })).rejects.toMatchObject({ code: 2 });
  });
});

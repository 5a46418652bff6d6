import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/db/database.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { liveSession } from '../support/live-session.ts';
import type { ConsentCategory } from '../../machines/memory/memory.port.ts';
import { streamingModel, subagentModel } from '../support/models.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const fact = { content: 'Elle aime les fraises du marché.', category: 'profil', confidence: 0.9 };
const subagent = subagentModel({ score: 82, facts: [fact] });
let rt: TestRuntime;

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: streamingModel(['Je vous écoute.']), subagentModel: subagent }, { CLOSE_JOBS_CONCURRENCY: '2' });
});
afterAll(() => rt.close());

/** A fresh senior with a kiosk (and the given consents), a session of `turns` agent turns, ended. */
async function sessionOf(turns: string[], consents: ConsentCategory[] = ['conversation', 'profil']) {
  const { senior, kiosk } = await liveSession(rt, consents);
  for (const [i, t] of turns.entries()) await kiosk.turn(`t${i}`, t);
  kiosk.send({ type: 'session.end' });
  await kiosk.next('session.closed');
  kiosk.close();
  await rt.closeJobs.drain(10_000);
  return senior;
}

const moodRows = async (senior: string) =>
  (await rt.db.pool.query('SELECT score, tier, source, summary, recorded_at FROM mood_scores WHERE senior_id = $1 ORDER BY recorded_at', [senior])).rows;
const dropped = async (kind: string, reason: string) =>
  (await rt.metrics.closeJobsDropped.get()).values.find((v) => v.labels.kind === kind && v.labels.reason === reason)?.value ?? 0;
const jobCount = async (kind: string, outcome: string) =>
  (await rt.metrics.closeJobs.get()).values.find((v) => v.labels.kind === kind && v.labels.outcome === outcome)?.value ?? 0;

describe('close-time jobs', () => {
  it('writes one per_turn mood row per turn, with tier and summary, and persists the extracted facts', async () => {
    const senior = await sessionOf(['je suis allée au marché', 'il faisait beau', 'j’ai acheté des fraises']);
    const rows = await moodRows(senior);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatchObject({ score: 82, tier: 'enjoue', source: 'per_turn', summary: 'Le senior a évoqué sa journée.' });
    const facts = await rt.memory.memory.search('fraises', senior, 5);
    expect(facts.map((f) => f.content)).toEqual([fact.content]);
  });

  it('derives nothing without the conversation consent (INV-C01)', async () => {
    const skippedBefore = await jobCount('mood', 'skipped');
    const senior = await sessionOf(['je me sens seule aujourd’hui'], ['profil']);
    expect(await moodRows(senior)).toEqual([]);
    expect((await rt.db.pool.query('SELECT count(*)::int AS n FROM memory_facts WHERE senior_id = $1', [senior])).rows[0].n).toBe(0);
    expect(await jobCount('mood', 'skipped')).toBe(skippedBefore + 1);
  });

  it('derives nothing from a session closed by erasure: no close-time job, and the turn’s pending derivation writes nothing', async () => {
    const modelCalls = subagent.doGenerateCalls.length;
    const droppedBefore = await dropped('mood', 'erased');
    let answer!: () => void;
    subagent.state.held = new Promise((resolve) => (answer = resolve));
    try {
      const { senior, kiosk } = await liveSession(rt);
      await kiosk.turn('t0', 'mon fils vient demain');
      // The turn's mood job is calling the model (score and summary) when the erasure comes; the calls answer after it.
      await expect.poll(() => subagent.state.inFlight).toBe(2);
      await rt.app.inject({ method: 'DELETE', url: `/v1/admin/seniors/${senior}/data`, headers: { authorization: `Bearer ${rt.seed!.adminToken}` } });
      await kiosk.next('session.closed');
      kiosk.close();
      answer();
      expect(await rt.closeJobs.drain(10_000)).toBe(true);
      expect((await rt.db.pool.query('SELECT count(*)::int AS n FROM mood_scores WHERE senior_id = $1', [senior])).rows[0].n).toBe(0);
      expect(await dropped('mood', 'erased')).toBe(droppedBefore + 1);
      // Only the turn's two calls: no extraction, no segment.
      expect(subagent.doGenerateCalls.length).toBe(modelCalls + 2);
    } finally {
      answer();
      subagent.state.held = null;
    }
  });

  it('derives each turn while the session is live, and not again at close', async () => {
    const moodJobs = await jobCount('mood', 'ok');
    const { senior, kiosk } = await liveSession(rt);
    await kiosk.turn('t0', 'je suis allée voir ma sœur');
    await kiosk.turn('t1', 'nous avons pris le thé');
    // Written before the session ends: a crash now would lose nothing of these two turns.
    await expect.poll(async () => (await moodRows(senior)).length).toBe(2);
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    kiosk.close();
    expect(await rt.closeJobs.drain(10_000)).toBe(true);
    expect(await moodRows(senior)).toHaveLength(2);
    expect(await jobCount('mood', 'ok')).toBe(moodJobs + 2);
    expect(await jobCount('segment', 'ok')).toBeGreaterThan(0);
  });

  it('a failing summarizer still writes the score row, with a null summary', async () => {
    subagent.state.failSummary = true;
    try {
      const senior = await sessionOf(['j’ai bien dormi']);
      expect(await moodRows(senior)).toEqual([expect.objectContaining({ score: 82, summary: null })]);
    } finally {
      subagent.state.failSummary = false;
    }
  });

  it('a failing classifier writes no row and counts an error', async () => {
    subagent.state.failScore = true;
    const errorsBefore = await jobCount('mood', 'error');
    try {
      const senior = await sessionOf(['bonsoir à tous les deux']);
      expect(await moodRows(senior)).toEqual([]);
      expect(await jobCount('mood', 'error')).toBe(errorsBefore + 1);
    } finally {
      subagent.state.failScore = false;
    }
  });

  it('runs in a pool bounded by CLOSE_JOBS_CONCURRENCY', async () => {
    // The turns' mood jobs, queued as each turn ends, are held in their calls until the pool is full, so they
    // overlap however slowly the turns come.
    let answer!: () => void;
    subagent.state.held = new Promise((resolve) => (answer = resolve));
    subagent.state.maxInFlight = 0;
    try {
      const full = expect.poll(() => subagent.state.inFlight).toBe(4).then(answer);
      const senior = await sessionOf(['un', 'deux', 'trois', 'quatre', 'cinq', 'six'].map((w) => `je compte ${w} fois`));
      await full;
      expect(await moodRows(senior)).toHaveLength(6);
      // Two jobs at once, each mood job scoring and summarizing in parallel: four calls at most.
      expect(subagent.state.maxInFlight).toBe(4);
    } finally {
      answer();
      subagent.state.held = null;
    }
  });
});

describe('shutdown drains the pool', () => {
  it('jobs of sessions closed by SIGTERM’s shutdown are written before the database closes', async () => {
    const dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-drain-')), 'pglite');
    const slow = subagentModel({ score: 40 });
    slow.state.delayMs = 50;
    const own = await startTestRuntime({ agentModel: streamingModel(['Oui.']), subagentModel: slow }, { PGLITE_DATA_DIR: dir });
    const kiosk = await KioskClient.connect(own.wsUrl, own.seed!.kioskToken);
    await kiosk.start();
    await kiosk.turn('a', 'il pleut depuis ce matin');
    await kiosk.turn('b', 'je reste à la maison');
    await own.close();
    const reopened = await openDatabase({ pgliteDataDir: dir });
    try {
      const rows = await reopened.pool.query('SELECT tier FROM mood_scores');
      expect(rows.rows).toEqual([{ tier: 'melancolique' }, { tier: 'melancolique' }]);
    } finally {
      await reopened.close();
    }
  });
});

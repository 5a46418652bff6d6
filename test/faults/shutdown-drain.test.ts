import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMistral } from '@ai-sdk/mistral';
import { openDatabase } from '../../runtime/db/database.ts';
import { FakeMistral, subagentAnswers } from '../support/fake-mistral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { controllableModel, streamingModel, subagentModel } from '../support/models.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const tempDataDir = async () => path.join(await mkdtemp(path.join(tmpdir(), 'kohami-shutdown-')), 'pglite');

/** `sessions` kiosks, each with `turns` answered turns, left live for the shutdown to close. */
async function liveSessions(rt: TestRuntime, sessions: number, turns: number): Promise<KioskClient[]> {
  const seniors = [rt.seed!.seniorId];
  for (let i = 1; i < sessions; i++) seniors.push(await rt.directory.createSenior({ displayName: `Senior ${i}`, onboardingDone: true }));
  return Promise.all(
    seniors.map(async (seniorId, i) => {
      if (i > 0) await rt.consents.grant(seniorId, 'conversation');
      const token = `kiosk_shutdown_${i}_${'x'.repeat(16)}`;
      if (i > 0) await rt.directory.addDevice(seniorId, token, 'kiosk');
      const kiosk = await KioskClient.connect(rt.wsUrl, i === 0 ? rt.seed!.kioskToken : token);
      await kiosk.start();
      for (let t = 0; t < turns; t++) await kiosk.turn(`t${t}`, `il pleut depuis ce matin, numéro ${t}`);
      return kiosk;
    }),
  );
}

describe('a deploy loses no derivation (issue 10: a SIGTERM under load dropped close-time jobs)', () => {
  it('SIGTERM: /ready turns 503 at once, new kiosks are refused, the queue drains at a raised concurrency before the database closes', async () => {
    const dir = await tempDataDir();
    const subagent = subagentModel({ score: 40 });
    subagent.state.delayMs = 150;
    // Concurrency 1 in normal times: the drain must raise it to finish in time.
    const rt = await startTestRuntime({ agentModel: streamingModel(['Oui.']), subagentModel: subagent }, { PGLITE_DATA_DIR: dir, CLOSE_JOBS_CONCURRENCY: '1', SHUTDOWN_DRAIN_CONCURRENCY: '16' });
    const kiosks = await liveSessions(rt, 6, 3);
    const closing = rt.close();
    expect((await fetch(`${rt.url}/ready`)).status).toBe(503);
    await expect(KioskClient.connect(rt.wsUrl, rt.seed!.kioskToken)).rejects.toMatchObject({ statusCode: 503 });
    expect(await Promise.all(kiosks.map((k) => k.next('session.closed')))).toEqual(kiosks.map(() => expect.objectContaining({ reason: 'shutdown' })));
    await closing;
    // 6 sessions × 3 turns = 18 mood jobs + 6 extractions + 6 segments at 150 ms (mood: 2 calls in parallel).
    expect(subagent.state.maxInFlight).toBeGreaterThan(1);
    const reopened = await openDatabase({ pgliteDataDir: dir });
    try {
      expect((await reopened.pool.query('SELECT count(*)::int AS n FROM mood_scores')).rows[0].n).toBe(18);
      expect((await reopened.pool.query('SELECT count(*)::int AS n FROM segments')).rows[0].n).toBe(6);
    } finally {
      await reopened.close();
    }
    expect(rt.logs.text).not.toContain('derivations are lost');
  }, 60_000);

  it('what cannot finish within SHUTDOWN_DRAIN_MS is counted in a metric and logged as a count, never as text', async () => {
    const subagent = subagentModel({ score: 40 });
    // Under the sub-agents' 4 s bound, and long enough that no turn's mood job, started while its session lived, ends before the shutdown.
    subagent.state.delayMs = 3500;
    const rt = await startTestRuntime({ agentModel: streamingModel(['Oui.']), subagentModel: subagent }, { SHUTDOWN_DRAIN_MS: '100', SHUTDOWN_DRAIN_CONCURRENCY: '2' });
    await liveSessions(rt, 2, 2);
    await rt.close();
    const lost = (await rt.metrics.closeJobsLost.get()).values[0]!.value;
    // 2 sessions: 4 mood jobs, 2 extractions, 2 segments — none can finish in 100 ms.
    expect(lost).toBe(8);
    const line = rt.logs.lines.find((l) => l.includes('derivations are lost'))!;
    // By kind: the turns' mood jobs (queued while the sessions were live) and each session's extraction and segment.
    expect(JSON.parse(line)).toMatchObject({ lost: 8, mood: 4, extraction: 2, segment: 2, budgetMs: 100 });
    expect(line).not.toContain('pleut');
  });

  it('a derivation backing off on a 429 when SIGTERM comes waits out its Retry-After and is written within the drain', async () => {
    const dir = await tempDataDir();
    const fake = await new FakeMistral().start();
    try {
      fake.generate = subagentAnswers({ score: 35 });
      const subagentModel = createMistral({ apiKey: 'test-key', baseURL: fake.baseUrl })('mistral-small-2603');
      const rt = await startTestRuntime({ agentModel: streamingModel(['Oui.']), subagentModel }, { PGLITE_DATA_DIR: dir });
      fake.failNext.push({ status: 429, headers: { 'retry-after': '1' } }, { status: 429, headers: { 'retry-after': '1' } });
      await liveSessions(rt, 1, 1);
      // The turn's mood job has met the 429s: it is backing off when the shutdown begins.
      await expect.poll(async () => (await rt.metrics.closeJobsRetried.get()).values.reduce((n, v) => n + v.value, 0)).toBeGreaterThan(0);
      await rt.close();
      expect((await rt.metrics.closeJobsLost.get()).values[0]?.value ?? 0).toBe(0);
      const reopened = await openDatabase({ pgliteDataDir: dir });
      try {
        expect((await reopened.pool.query('SELECT tier FROM mood_scores')).rows).toEqual([{ tier: 'melancolique' }]);
      } finally {
        await reopened.close();
      }
    } finally {
      await fake.stop();
    }
  }, 60_000);

  it('a turn in flight at SIGTERM is answered before its session closes (SHUTDOWN_TURN_GRACE_MS), and no SOS', async () => {
    const model = controllableModel(['Il fait ', 'beau aujourd’hui.']);
    const rt = await startTestRuntime({ agentModel: model, subagentModel: subagentModel({ score: 50 }) });
    const kiosk = await KioskClient.connect(rt.wsUrl, rt.seed!.kioskToken);
    await kiosk.start();
    kiosk.send({ type: 'turn', turnId: 'mid', transcript: 'quel temps fait-il dehors ce matin ?' });
    // The reply has begun: the turn is in flight when the shutdown starts.
    await kiosk.next((f) => f.type === 'reply.delta' && f.turnId === 'mid');
    const closing = rt.close();
    expect((await fetch(`${rt.url}/ready`)).status).toBe(503);
    // The model's next chunk may not be waiting yet when the delta arrives: released until the reply is done.
    await expect.poll(() => (model.release(), kiosk.frames.some((f) => f.type === 'reply.done'))).toBe(true);
    expect(await kiosk.next('reply.done')).toMatchObject({ turnId: 'mid', flux: 'agent', text: 'Il fait beau aujourd’hui.' });
    expect(await kiosk.next('session.closed')).toEqual({ type: 'session.closed', reason: 'shutdown' });
    await closing;
  });
});

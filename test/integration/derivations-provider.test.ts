import { createMistral } from '@ai-sdk/mistral';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMistral, subagentAnswers } from '../support/fake-mistral.ts';
import type { KioskClient } from '../support/kiosk-client.ts';
import { liveSession } from '../support/live-session.ts';
import { streamingModel } from '../support/models.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The derivation pool against a provider that throttles and fails: the real Mistral adapter of
 * the AI SDK talking to the local fake Mistral server (429 with Retry-After, 503, latency), the
 * rows written on real PGlite.
 */
const fake = new FakeMistral();
let rt: TestRuntime;

beforeAll(async () => {
  await fake.start();
  fake.generate = subagentAnswers({ score: 72 });
  fake.generateLatencyMs = 50;
  const subagentModel = createMistral({ apiKey: 'test-key', baseURL: fake.baseUrl })('mistral-small-2603');
  rt = await startTestRuntime({ agentModel: streamingModel(['Je vous écoute.']), subagentModel }, { CLOSE_JOBS_CONCURRENCY: '4' });
});
afterAll(async () => {
  await rt.close();
  await fake.stop();
});

/** A new consenting senior's live session with one answered turn. */
async function oneTurn(text: string): Promise<{ senior: string; kiosk: KioskClient }> {
  const { senior, kiosk } = await liveSession(rt);
  await kiosk.turn('t0', text);
  return { senior, kiosk };
}

const moodRows = async (senior: string) => (await rt.db.pool.query('SELECT score, summary FROM mood_scores WHERE senior_id = $1', [senior])).rows;
const retried = async () => (await rt.metrics.closeJobsRetried.get()).values.filter((v) => v.labels.cause === 'model').reduce((n, v) => n + v.value, 0);

describe('derivations against a throttling provider (real Mistral adapter, fake server)', () => {
  it.each([
    ['an injected failure', () => fake.failNext.push({ status: 429, headers: { 'retry-after': '1' } }), (calls: typeof fake.generateLog) => calls.find((c) => c.status === 429)!.answeredAt],
    ['the rate-limited behaviour', () => fake.behaviours.add('rate-limited'), () => fake.rateLimited.at(-1)!.at],
  ])('a 429 with Retry-After (%s): no call reaches the provider before it has passed; the turn is derived after it, summary included', async (_how, throttle, refusedAt) => {
    const retriedBefore = await retried();
    throttle();
    const logged = fake.generateLog.length;
    try {
      const { senior, kiosk } = await oneTurn('ce matin j’ai arrosé les tomates');
      await expect.poll(() => moodRows(senior), { timeout: 15_000 }).toEqual([{ score: 72, summary: 'Le senior a parlé de sa journée au jardin.' }]);
      const calls = fake.generateLog.slice(logged);
      const refused = refusedAt(calls);
      // The score and summary calls leave together: the refused one's sibling was on its way, and may reach the
      // fake just after the refusal (the fake checks each request against Mistral's contract first). Every
      // call after it waits the Retry-After.
      const [, ...later] = calls.filter((c) => c.status !== 429).sort((a, b) => a.at - b.at);
      expect(later.length).toBeGreaterThan(0);
      expect(later.every((c) => c.at - refused >= 1000)).toBe(true);
      expect(await retried()).toBeGreaterThan(retriedBefore);
      kiosk.close();
    } finally {
      fake.behaviours.delete('rate-limited');
    }
  });

  it('503s are tried again with back-off until one succeeds; the summary the summarizer would have dropped is kept', async () => {
    fake.failNext.push({ status: 503 }, { status: 503 });
    const { senior, kiosk } = await oneTurn('ma petite-fille m’a téléphoné hier soir');
    await expect.poll(() => moodRows(senior), { timeout: 15_000 }).toEqual([{ score: 72, summary: 'Le senior a parlé de sa journée au jardin.' }]);
    expect(fake.failNext).toHaveLength(0);
    kiosk.close();
  });

  it('a slow provider (each call 1.5 s) still gets every turn derived, and the pool drains', async () => {
    fake.generateLatencyMs = 1500;
    try {
      const { senior, kiosk } = await oneTurn('je vais faire une promenade au parc');
      await kiosk.turn('t1', 'il fait doux aujourd’hui');
      kiosk.send({ type: 'session.end' });
      await kiosk.next('session.closed');
      kiosk.close();
      expect(await rt.closeJobs.drain(20_000)).toBe(true);
      expect(await moodRows(senior)).toHaveLength(2);
      expect((await rt.db.pool.query('SELECT count(*)::int AS n FROM segments WHERE senior_id = $1', [senior])).rows[0].n).toBe(1);
    } finally {
      fake.generateLatencyMs = 50;
    }
  });
});

import { APICallError } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProviderGate } from '../../adapters/models/provider-gate.ts';
import { backoffMs, DerivationPool, RETRY_BASE_MS, type Derivation } from '../../runtime/jobs/derivation-pool.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createMetrics, type Metrics } from '../../runtime/metrics.ts';
import { LogCapture } from '../support/runtime.ts';

const dbDown = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'il pleut depuis ce matin' }] }];

let metrics: Metrics;
let logs: LogCapture;
let gate: ProviderGate;

function pool(overrides: Partial<ConstructorParameters<typeof DerivationPool>[0]> = {}) {
  return new DerivationPool({
    concurrency: 2,
    maxAttempts: 4,
    maxTranscripts: 100,
    maxHeldBytes: 1_000_000,
    gate,
    metrics,
    logger: createLogger('debug', logs),
    // The longest back-off of each attempt: the tests know exactly when a retry is due.
    random: () => 1,
    ...overrides,
  });
}

const value = async (name: 'closeJobs' | 'closeJobsRetried' | 'closeJobsDropped' | 'closeJobsLost', labels: Record<string, string> = {}) =>
  (await metrics[name].get()).values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k as never] === l)).reduce((n, v) => n + v.value, 0);

/** A job writing into `written`, whose derive runs `derive`. */
function job(derive: () => Promise<unknown>, written: unknown[], seniorId = 's1', kind: Derivation['kind'] = 'mood'): Derivation {
  return { kind, seniorId, derive, write: async (r) => void written.push(r) };
}

/**
 * Fake time forward by `ms`, then the pool's yields to the event loop (real `setImmediate`s, which
 * fake timers leave alone) until it has nothing left to do at that time.
 */
async function tick(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 8; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(0);
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  metrics = createMetrics();
  logs = new LogCapture();
  gate = new ProviderGate();
});
afterEach(() => vi.useRealTimers());

describe('back-off', () => {
  it('is exponential from 500 ms, jittered over its upper half, capped at 30 s, and never shorter than a Retry-After', () => {
    expect(backoffMs(1, null, () => 0)).toBe(250);
    expect(backoffMs(1, null, () => 1)).toBe(500);
    expect(backoffMs(3, null, () => 1)).toBe(2000);
    expect(backoffMs(20, null, () => 1)).toBe(30_000);
    expect(backoffMs(1, 4000, () => 1)).toBe(4000);
  });

  it('a transient database failure is retried after its back-off, without calling the model again', async () => {
    const p = pool();
    const written: unknown[] = [];
    let derives = 0;
    let writes = 0;
    p.submit('session', { transcripts: 1, bytes: 10 }, [
      {
        kind: 'mood',
        seniorId: 's1',
        derive: async () => (derives += 1),
        write: async (r) => {
          writes += 1;
          if (writes <= 2) throw dbDown();
          written.push(r);
        },
      },
    ]);
    await tick(0);
    expect(writes).toBe(1);
    await tick(RETRY_BASE_MS - 1);
    expect(writes).toBe(1);
    await tick(1);
    expect(writes).toBe(2);
    // The second back-off doubles.
    await tick(2 * RETRY_BASE_MS - 1);
    expect(writes).toBe(2);
    await tick(1);
    expect(written).toEqual([1]);
    expect(derives).toBe(1);
    expect(await value('closeJobsRetried', { cause: 'database' })).toBe(2);
    expect(await value('closeJobs', { outcome: 'ok' })).toBe(1);
    expect(p.stats()).toEqual({ queued: 0, inFlight: 0, transcripts: 0, bytes: 0 });
  });

  it('gives up after CLOSE_JOBS_MAX_ATTEMPTS tries, counted as an error and logged without text', async () => {
    const p = pool({ maxAttempts: 3 });
    let tries = 0;
    p.submit('session', { transcripts: 1, bytes: 10 }, [
      job(async () => {
        tries += 1;
        throw dbDown();
      }, []),
    ]);
    await tick(60_000);
    expect(tries).toBe(3);
    expect(await value('closeJobs', { outcome: 'error' })).toBe(1);
    expect(await value('closeJobsRetried')).toBe(2);
    expect(logs.text).toContain('derivation job failed');
    expect(await p.drain(0)).toBe(true);
  });

  it('a permanent failure (an erased senior’s foreign key) is not retried', async () => {
    const p = pool();
    let tries = 0;
    p.submit('session', { transcripts: 1, bytes: 10 }, [
      job(async () => {
        tries += 1;
        throw Object.assign(new Error('violates foreign key constraint'), { code: '23503' });
      }, []),
    ]);
    await tick(60_000);
    expect(tries).toBe(1);
    expect(await value('closeJobsRetried')).toBe(0);
  });
});

describe('the provider’s Retry-After', () => {
  it('a 429 pauses every call through the gate for its Retry-After; a summary the sub-agent swallowed is derived again after it', async () => {
    const calls: number[] = [];
    const model = gate.wrap(
      new MockLanguageModelV4({
        doGenerate: async () => {
          calls.push(Date.now());
          if (calls.length === 1) {
            throw new APICallError({ message: '429', url: 'u', requestBodyValues: {}, statusCode: 429, responseHeaders: { 'retry-after': '3' }, isRetryable: true });
          }
          return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
        },
      }),
    );
    // Like the summarizers: a failure becomes null, never a throw.
    const swallowing = async () => {
      try {
        await model.doGenerate({ prompt });
        return 'summary';
      } catch {
        return null;
      }
    };
    const p = pool();
    const written: unknown[] = [];
    const start = Date.now();
    p.submit('a', { transcripts: 1, bytes: 10 }, [job(swallowing, written)]);
    await tick(0);
    expect(calls).toHaveLength(1);
    expect(gate.pauseMs).toBe(3000);
    // Another job arriving during the pause waits for it: no call reaches the provider meanwhile.
    p.submit('b', { transcripts: 1, bytes: 10 }, [job(swallowing, written, 's2')]);
    await tick(2999);
    expect(calls).toHaveLength(1);
    await tick(1);
    await tick(1);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.slice(1).every((at) => at - start >= 3000)).toBe(true);
    await tick(1000);
    expect(written).toEqual(['summary', 'summary']);
    expect(await value('closeJobsRetried', { cause: 'model' })).toBe(1);
  });
});

describe('the memory bound', () => {
  it('drops jobs that would hold more transcripts than the bound, counts them, and takes new ones once room is made', async () => {
    const p = pool({ maxTranscripts: 5, concurrency: 1 });
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const written: unknown[] = [];
    expect(p.submit('s1', { transcripts: 3, bytes: 300 }, [job(() => blocked.then(() => 'first'), written)])).toBe(true);
    // The same session holding one more turn: one more counted, within the bound.
    expect(p.submit('s1', { transcripts: 4, bytes: 400 }, [job(async () => 'second', written)])).toBe(true);
    expect(p.stats()).toMatchObject({ transcripts: 4, bytes: 400 });
    // Another session's close jobs (2 turns) would make 6: refused whole, counted per job.
    expect(p.submit('s2', { transcripts: 2, bytes: 200 }, [job(async () => 'x', written, 's2', 'extraction'), job(async () => 'y', written, 's2', 'segment')])).toBe(false);
    expect(await value('closeJobsDropped', { reason: 'memory_bound' })).toBe(2);
    expect(await value('closeJobsDropped', { kind: 'segment', reason: 'memory_bound' })).toBe(1);
    release();
    await tick(10);
    expect(written).toEqual(['first', 'second']);
    expect(p.stats().transcripts).toBe(0);
    expect(p.peak).toEqual({ transcripts: 4, bytes: 400 });
    expect(p.submit('s2', { transcripts: 2, bytes: 200 }, [job(async () => 'z', written, 's2')])).toBe(true);
  });

  it('bounds the bytes held too', async () => {
    const p = pool({ maxHeldBytes: 1000 });
    expect(p.submit('s1', { transcripts: 1, bytes: 1001 }, [job(async () => 1, [])])).toBe(false);
    expect(await value('closeJobsDropped', { reason: 'memory_bound' })).toBe(1);
  });
});

describe('erasure and shutdown', () => {
  it('erasing a senior drops their queued jobs and makes a running one write nothing', async () => {
    const p = pool({ concurrency: 1 });
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const written: unknown[] = [];
    let laterDerived = false;
    p.submit('s1', { transcripts: 2, bytes: 20 }, [
      job(() => blocked.then(() => 'running'), written),
      job(async () => (laterDerived = true), written),
    ]);
    p.submit('other', { transcripts: 1, bytes: 10 }, [job(async () => 'other senior', written, 's2')]);
    await tick(0);
    expect(p.invalidateSenior('s1')).toBe(2);
    release();
    await tick(10);
    expect(written).toEqual(['other senior']);
    expect(laterDerived).toBe(false);
    expect(await value('closeJobsDropped', { reason: 'erased' })).toBe(2);
    expect(p.stats()).toEqual({ queued: 0, inFlight: 0, transcripts: 0, bytes: 0 });
  });

  it('SIGTERM drains within its budget; what is left is counted and logged by kind, never as text', async () => {
    const p = pool({ concurrency: 1 });
    const never = () => new Promise<never>(() => {});
    const jobs = [job(never, []), job(never, [], 's1', 'extraction'), job(never, [], 's1', 'segment')];
    p.submit('s1', { transcripts: 3, bytes: 30 }, jobs);
    const shutdown = p.shutdown(25_000, 2);
    await tick(25_000);
    expect(await shutdown).toBe(3);
    expect(await value('closeJobsLost')).toBe(3);
    const line = JSON.parse(logs.lines.find((l) => l.includes('derivations are lost'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ lost: 3, mood: 1, extraction: 1, segment: 1, transcripts: 3, budgetMs: 25_000 });
    expect(logs.text).not.toContain('pleut');
    expect(p.submit('s2', { transcripts: 1, bytes: 10 }, [job(async () => 1, [])])).toBe(false);
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseWhileStarting, raceOffsets, type RaceOutcome, type RaceSides } from '../support/erasure-race.ts';
import { processMetric as metric, runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/**
 * Issue 33's race: a kiosk `session.start` sent 0–4 ms before or after `DELETE /v1/admin/seniors/:id/data`
 * (and a few trials 0–30 ms apart).
 * Presence beats fast (a session the erasure missed closes at the next beat, as `replaced`), so a
 * trial that goes wrong ends quickly; nothing here waits on the beat to pass.
 */
const SPREAD_MS = 4;
/** A few trials further apart, so that some sessions have started (and answered turns) when the erasure comes. */
const WIDE_SPREAD_MS = 30;
const WIDE_TRIALS = 10;
const offsets = (trials: number) => [...raceOffsets(trials, SPREAD_MS), ...raceOffsets(WIDE_TRIALS, WIDE_SPREAD_MS)];
const HEARTBEAT = { PRESENCE_HEARTBEAT_MS: '300' };

const failures = (outcomes: RaceOutcome[]) => outcomes.filter((o) => o.problems.length > 0);

function report(where: string, outcomes: RaceOutcome[]): void {
  const bad = failures(outcomes);
  const outlived = bad.filter((o) => o.problems.some((p) => /live session|answered after/.test(p))).length;
  const started = outcomes.filter((o) => o.started).length;
  console.log(`${where}: ${bad.length} of ${outcomes.length} trials went wrong; in ${outlived} the senior's session outlived the erasure (${started} sessions had started, ${outcomes.length - started} starts were refused)`);
  for (const o of bad) console.log(`  start ${o.offsetMs >= 0 ? `${o.offsetMs} ms before` : `${-o.offsetMs} ms after`} the DELETE: ${o.problems.join('; ')}`);
}

describe('erasure racing a session start, one process', () => {
  const TRIALS = 40;
  let rt: TestRuntime;
  let sides: RaceSides;

  beforeAll(async () => {
    rt = await startTestRuntime({}, HEARTBEAT);
    sides = {
      kioskWs: rt.wsUrl,
      adminUrl: rt.url,
      pool: rt.db.pool,
      liveSessions: async () => rt.registry.size,
      derivationFailures: () => rt.logs.lines.filter((l) => l.includes('derivation job failed')).length,
      derivationsIdle: async () => void (await rt.closeJobs.drain(30_000)),
    };
  }, 60_000);
  afterAll(() => rt?.close());

  it('leaves no session, answers no turn after the DELETE, closes as erased and derives nothing, whichever comes first', async () => {
    const outcomes: RaceOutcome[] = [];
    for (const offset of offsets(TRIALS)) outcomes.push(await eraseWhileStarting(sides, offset));
    report('one process', outcomes);
    expect(failures(outcomes)).toEqual([]);
  }, 240_000);
});

describe('erasure racing a session start, two processes on one database', () => {
  const TRIALS = 40;
  let wire: SharedDatabase;
  let a: RuntimeProcess;
  let b: RuntimeProcess;
  let pool: pg.Pool;

  beforeAll(async () => {
    wire = await sharedDatabase();
    a = await runtimeProcess(wire.url, HEARTBEAT);
    b = await runtimeProcess(wire.url, HEARTBEAT);
    pool = new pg.Pool({ connectionString: wire.url, max: 1 });
  }, 90_000);
  afterAll(async () => {
    for (const p of [a, b]) await p?.stop();
    await pool?.end();
    await wire?.stop();
  });

  it('the kiosk on B, the DELETE through A: no session left on either, none answering, closed as erased, nothing derived', async () => {
    const sides: RaceSides = {
      kioskWs: b.ws,
      adminUrl: a.url,
      pool,
      liveSessions: async () => (await metric(a, 'kohami_live_sessions')) + (await metric(b, 'kohami_live_sessions')),
      derivationFailures: () => (a.output() + b.output()).split('derivation job failed').length - 1,
      derivationsIdle: async () => {
        for (const p of [a, b]) {
          await expect.poll(async () => (await metric(p, 'kohami_close_jobs_queued')) + (await metric(p, 'kohami_close_jobs_in_flight')), { timeout: 30_000 }).toBe(0);
        }
      },
    };
    const outcomes: RaceOutcome[] = [];
    for (const offset of offsets(TRIALS)) outcomes.push(await eraseWhileStarting(sides, offset));
    report('two processes', outcomes);
    expect(failures(outcomes)).toEqual([]);
  }, 300_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveSession } from '../support/live-session.ts';
import { streamingModel, subagentModel } from '../support/models.ts';
import { startWirePostgres } from '../support/pglite-server.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { TcpRelay } from '../support/tcp-relay.ts';

/**
 * Issue 22: a 0.2 s PostgreSQL restart failed the derivations writing at that moment, for good,
 * though their transcripts were still in memory. The database here is real (PGlite over the wire
 * protocol) behind a relay that cuts every connection and refuses new ones while "restarting".
 */
let db: Awaited<ReturnType<typeof startWirePostgres>>;
const relay = new TcpRelay();
const subagent = subagentModel({ score: 55 });
let rt: TestRuntime;

beforeAll(async () => {
  db = await startWirePostgres();
  await relay.start({ path: db.socket });
  rt = await startTestRuntime({ agentModel: streamingModel(['Je vous écoute.']), subagentModel: subagent }, { DATABASE_URL: `postgres://postgres@127.0.0.1:${relay.port}/postgres` });
});
afterAll(async () => {
  relay.resume();
  await rt.close();
  await relay.stop();
  await db.stop();
});

const retried = async () => (await rt.metrics.closeJobsRetried.get()).values.find((v) => v.labels.kind === 'mood' && v.labels.cause === 'database')?.value ?? 0;

describe('a database restart during a derivation', () => {
  it('the write is tried again after a back-off and lands once the database is back; the model is not called again', async () => {
    subagent.state.delayMs = 300;
    const { senior, kiosk } = await liveSession(rt);
    await kiosk.turn('t0', 'il pleut depuis ce matin');
    // The turn's mood job is calling the model (score and summary): its write comes next.
    await expect.poll(() => subagent.state.inFlight).toBe(2);
    const calls = subagent.doGenerateCalls.length;
    relay.cut();
    await expect.poll(retried, { timeout: 10_000 }).toBeGreaterThan(0);
    relay.resume();
    await expect
      .poll(async () => (await rt.db.pool.query('SELECT score FROM mood_scores WHERE senior_id = $1', [senior])).rows, { timeout: 15_000 })
      .toEqual([{ score: 55 }]);
    expect(subagent.doGenerateCalls.length).toBe(calls);
    expect((await rt.metrics.closeJobs.get()).values.find((v) => v.labels.kind === 'mood' && v.labels.outcome === 'error')?.value ?? 0).toBe(0);
    kiosk.close();
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { moodTier } from '../../machines/memory/derivation.ts';
import { parisDay } from '../../machines/memory/dream.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { shiftDay } from '../../machines/memory/mood-alerts.ts';
import { ALERT_JOBS_POLL_S, DELIVER_QUEUE } from '../../runtime/jobs/caregiver-alerts.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { processMetric as metric, runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';
import { POST_BOUND_MS, WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Two real runtime processes on one database, both posting the caregivers' alerts to one receiver: a
 * senior's episode is evaluated by both (a kiosk session on each, one after the other) and posted once.
 * The sub-agents are offline, so a session's mood scores neutral: the three preoccupying days before it
 * are seeded through the scores' repository on the shared database (they make the streak, and any
 * capture asks for the evaluation).
 */
const RETRY_DELAY_S = 1;
const LOW = 20;
/** After the first post: a second would follow the second evaluation within a poll of the delivery queue. */
const GRACE_MS = 3 * ALERT_JOBS_POLL_S * 1000;
/** A session's mood capture written: its derivation on the shared database, on a loaded machine. */
const CAPTURE_BOUND_MS = 10_000;

let wire: SharedDatabase;
let receiver: WebhookReceiver;
let a: RuntimeProcess;
let b: RuntimeProcess;
let db: pg.Pool;

beforeAll(async () => {
  wire = await sharedDatabase();
  receiver = await WebhookReceiver.start();
  const env = {
    CAREGIVER_ALERT_WEBHOOK_URL: receiver.url,
    CAREGIVER_ALERT_WEBHOOK_SECRET: 'test-webhook-secret-0123456789abcdef0123',
    CAREGIVER_ALERT_RETRY_DELAY_S: String(RETRY_DELAY_S),
    // Each evaluation logs one debug line: the test counts them.
    LOG_LEVEL: 'debug',
  };
  [a, b] = await Promise.all([runtimeProcess(wire.url, env), runtimeProcess(wire.url, env)]);
  db = new pg.Pool({ connectionString: wire.url, max: 1 });
}, 90_000);
afterAll(async () => {
  for (const p of [a, b]) await p?.stop();
  await db?.end();
  await receiver?.close();
  await wire?.stop();
});

/** The evaluations of the senior logged so far, by both processes. */
const evaluations = (seniorId: string) =>
  [a, b]
    .flatMap((p) => p.output().split('\n'))
    .filter((l) => l.includes('"msg":"caregiver alerts evaluated"') && l.includes(`"seniorId":"${seniorId}"`)).length;

/** One kiosk session of one turn on `p`; returns once its mood capture is written (nothing left in its close jobs). */
async function session(p: RuntimeProcess, token: string): Promise<void> {
  const kiosk = await KioskClient.connect(p.ws, token);
  await kiosk.start();
  await kiosk.turn('t0', 'je ne suis pas sortie de la semaine');
  kiosk.send({ type: 'session.end' });
  await kiosk.next('session.closed');
  kiosk.close();
  await expect
    .poll(async () => (await metric(p, 'kohami_close_jobs_queued')) + (await metric(p, 'kohami_close_jobs_in_flight')), { timeout: CAPTURE_BOUND_MS })
    .toBe(0);
}

describe('caregiver alerts with two runtime processes on one database', () => {
  it('an episode both processes evaluate is posted once', async () => {
    const directory = new SeniorDirectory(db);
    const senior = await directory.createSenior({ displayName: 'Odette Lambert', preferredName: 'Odette', onboardingDone: true });
    const consents = new PgConsentAdapter(db);
    for (const category of CONSENT_CATEGORIES) await consents.grant(senior, category);
    const token = generateToken('kiosk');
    await directory.addDevice(senior, token);
    const today = parisDay(new Date());
    const scores = new PgMoodScoresRepository(db);
    for (const n of [3, 2, 1]) await scores.insert({ seniorId: senior, score: LOW, tier: moodTier(LOW), summary: null, recordedAt: new Date(`${shiftDay(today, -n)}T11:00:00Z`) });

    await session(a, token);
    const [post] = await receiver.posted(senior, 1, POST_BOUND_MS);
    expect(post!.body).toMatchObject({ kind: 'tier_streak', from: shiftDay(today, -3), days: 3 });
    expect(post!.headers['x-kohami-delivery']).toBe(post!.body.id);
    // Its evaluation's log line is written after the post's job is queued, which wakes the worker at once:
    // the post can reach the receiver before the line has come through the process's pipe.
    await expect.poll(() => evaluations(senior)).toBeGreaterThan(0);
    const evaluated = evaluations(senior);

    await session(b, token);
    await expect.poll(() => evaluations(senior), { timeout: POST_BOUND_MS }).toBeGreaterThan(evaluated);
    // No second post comes: not from the second evaluation, nor from a second delivery job.
    await expect(receiver.posted(senior, 2, GRACE_MS)).rejects.toThrow(/1 of 2 posts/);
    expect(receiver.of(senior).map((p) => p.headers['x-kohami-delivery'])).toEqual([post!.body.id]);
    const jobs = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND data->>'seniorId' = $2`, [DELIVER_QUEUE, senior]);
    expect(jobs.rows[0]!.n).toBe(1);
    const rows = await db.query(`SELECT id, delivery FROM caregiver_alerts WHERE senior_id = $1`, [senior]);
    expect(rows.rows).toEqual([{ id: post!.body.id, delivery: 'queued' }]);
  });
});

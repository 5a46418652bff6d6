import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { moodTier } from '../../machines/memory/derivation.ts';
import { parisDay } from '../../machines/memory/dream.ts';
import { shiftDay } from '../../machines/memory/mood-alerts.ts';
import { ALERT_JOBS_POLL_S, DELIVER_QUEUE, SWEEP_QUEUE, WEBHOOK_TIMEOUT_MS } from '../../runtime/jobs/caregiver-alerts.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, subagentModel } from '../support/models.ts';
import { adminApi, startTestRuntime } from '../support/runtime.ts';
import { POST_BOUND_MS, WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The caregivers' mood alerts end to end: days of scores seeded in the database, the evaluation run by
 * the runtime's own entry points (a kiosk session's mood capture, the morning sweep's job), the webhook
 * posted to a real HTTP receiver that checks each post with the verification code of docs/operations.md.
 */

const SECRET = 'test-webhook-secret-0123456789abcdef0123';
const RETRY_DELAY_S = 1;
const LOW = 20;
const FINE = 60;
/** Planted in every summary of the scores: it must never reach the receiver. */
const CANARY = 'CANARI-7f3e la voisine Germaine est passée';
/** A retry: pg-boss's first back-off is one to two retry delays, then a poll, then the post. */
const RETRY_BOUND_MS = 2 * RETRY_DELAY_S * 1000 + ALERT_JOBS_POLL_S * 1000 + WEBHOOK_TIMEOUT_MS;

type Verify = (header: unknown, rawBody: string, secret: string, toleranceSeconds?: number, nowSeconds?: number) => boolean;

/** The verification snippet of docs/operations.md's « Caregiver alerts », run as it is written. */
async function docsVerifier(): Promise<Verify> {
  const doc = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Caregiver alerts'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('docs/operations.md: no js snippet under « Caregiver alerts »');
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-verify-')), 'verify.mjs');
  await writeFile(file, code);
  return ((await import(pathToFileURL(file).href)) as { verifyKohamiSignature: Verify }).verifyKohamiSignature;
}

const today = () => parisDay(new Date());

/** A runtime whose sub-agents score every turn `answers.score`, with the canary as every summary. */
async function alertsRuntime(env: Record<string, string>) {
  const answers = { score: LOW, summary: CANARY };
  const rt = await startTestRuntime({ agentModel: streamingModel(['Je vous écoute.']), subagentModel: subagentModel(answers) }, env);
  /** A senior with the conversation consent and a kiosk token. */
  const senior = async () => {
    const id = await rt.directory.createSenior({ displayName: 'Germaine Dupont', preferredName: 'Germaine', onboardingDone: true });
    await rt.consents.grant(id, 'conversation');
    const token = generateToken('kiosk');
    await rt.directory.addDevice(id, token);
    return { id, token };
  };
  /** Scores at noon (Paris) `daysAgo` days before today, each summary the canary. */
  const seed = async (seniorId: string, score: number, ...daysAgo: number[]) => {
    for (const n of daysAgo) await rt.moodScores.insert({ seniorId, score, tier: moodTier(score), summary: CANARY, recordedAt: new Date(`${shiftDay(today(), -n)}T11:00:00Z`) });
  };
  /** One kiosk session of one turn, today, scored `score`: its mood capture is written, which asks for the senior's evaluation. */
  const session = async (token: string, score: number) => {
    answers.score = score;
    const kiosk = await KioskClient.connect(rt.wsUrl, token);
    await kiosk.start();
    await kiosk.turn('t0', 'je ne suis pas sortie de la semaine');
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    kiosk.close();
    expect(await rt.closeJobs.drain(10_000)).toBe(true);
  };
  const evaluations = (seniorId: string) =>
    rt.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'caregiver alerts evaluated' && l.seniorId === seniorId).length;
  const deliveryJobs = async (seniorId: string) =>
    (await rt.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND data->>'seniorId' = $2`, [DELIVER_QUEUE, seniorId])).rows[0]!.n;
  const rows = async (seniorId: string) =>
    (await rt.db.pool.query(`SELECT kind, to_char(from_day, 'YYYY-MM-DD') AS from, open, delivery FROM caregiver_alerts WHERE senior_id = $1 ORDER BY from_day`, [seniorId])).rows;
  return { rt, senior, seed, session, evaluations, deliveryJobs, rows };
}

describe('with a webhook', () => {
  let receiver: WebhookReceiver;
  let verify: Verify;
  let h: Awaited<ReturnType<typeof alertsRuntime>>;
  let api: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    verify = await docsVerifier();
    h = await alertsRuntime({ CAREGIVER_ALERT_WEBHOOK_URL: receiver.url, CAREGIVER_ALERT_WEBHOOK_SECRET: SECRET, CAREGIVER_ALERT_RETRY_DELAY_S: String(RETRY_DELAY_S) });
    api = adminApi(h.rt);
  });
  afterAll(async () => {
    await h?.rt.close();
    await receiver?.close();
  });

  it('posts a new episode once, signed as the docs say, with ids, days and numbers only', async () => {
    const { id, token } = await h.senior();
    await h.seed(id, LOW, 2, 1);
    // The jobs this process queues wake its own workers, rather than wait for their next poll.
    const wakes = vi.spyOn(h.rt.dreams.boss, 'notifyWorker');
    await h.session(token, LOW);
    const [post] = await receiver.posted(id, 1, POST_BOUND_MS);
    expect(wakes).toHaveBeenCalledTimes(2);
    expect(new Set(wakes.mock.calls.map(([worker]) => worker)).size).toBe(2);
    wakes.mockRestore();
    const alertId = String(post!.body.id);
    expect(post!.body).toEqual({
      id: alertId,
      seniorId: id,
      kind: 'tier_streak',
      open: true,
      from: shiftDay(today(), -2),
      to: today(),
      days: 3,
      tier: 'preoccupant',
      detectedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(post!.headers['x-kohami-delivery']).toBe(alertId);
    expect(post!.headers['content-type']).toBe('application/json');
    // The docs' own verification: it takes this post, and refuses it altered, replayed late, or under another secret.
    const signature = post!.headers['x-kohami-signature'];
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(signature, post!.raw, SECRET)).toBe(true);
    expect(verify(signature, post!.raw.replace('"days":3', '"days":4'), SECRET)).toBe(false);
    expect(verify(signature, post!.raw, `${SECRET}x`)).toBe(false);
    expect(verify(signature, post!.raw, SECRET, 300, Math.floor(Date.now() / 1000) + 301)).toBe(false);
    // No text: neither the summaries planted in every score nor the senior's names.
    for (const word of ['CANARI', 'Germaine', 'Dupont', 'voisine']) expect(post!.raw).not.toContain(word);
    expect(h.rt.logs.text).not.toContain(SECRET);
    // Nor in the delivery's log lines (ids, attempt, status only): the summaries never reach the log either.
    expect(h.rt.logs.text).not.toContain('CANARI');

    // A second evaluation (another capture the same day) updates the episode and queues nothing more.
    const evaluated = h.evaluations(id);
    await h.session(token, LOW);
    await expect.poll(() => h.evaluations(id), { timeout: POST_BOUND_MS }).toBeGreaterThan(evaluated);
    expect(await h.deliveryJobs(id)).toBe(1);
    expect(receiver.of(id)).toHaveLength(1);
    expect(await h.rows(id)).toEqual([{ kind: 'tier_streak', from: shiftDay(today(), -2), open: true, delivery: 'queued' }]);
  });

  it('tries a post again when the receiver fails, with the same delivery id; the log says ids and statuses only', async () => {
    const { id, token } = await h.senior();
    receiver.statuses.set(id, [500]);
    await h.seed(id, LOW, 2, 1);
    await h.session(token, LOW);
    const posts = await receiver.posted(id, 2, POST_BOUND_MS + RETRY_BOUND_MS);
    expect(posts.map((p) => p.headers['x-kohami-delivery'])).toEqual([posts[0]!.body.id, posts[0]!.body.id]);
    for (const p of posts) expect(verify(p.headers['x-kohami-signature'], p.raw, SECRET)).toBe(true);
    const outcomesOf = () => h.rt.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.seniorId === id && String(l.msg).startsWith('caregiver alert '));
    await expect.poll(() => outcomesOf().length, { timeout: POST_BOUND_MS }).toBe(2);
    const outcomes = outcomesOf();
    expect(outcomes.map((l) => [l.msg, l.status, l.attempt])).toEqual([
      ['caregiver alert webhook failed', 500, 0],
      ['caregiver alert posted', 200, 1],
    ]);
    const allowed = ['level', 'time', 'pid', 'hostname', 'msg', 'alertId', 'seniorId', 'attempt', 'status', 'final'];
    for (const line of outcomes) expect(Object.keys(line).filter((k) => !allowed.includes(k))).toEqual([]);
    expect(receiver.of(id)).toHaveLength(2);
  });

  it('posts an episode that closed, then the new one, once each; the caregiver reads both, the export lists them', async () => {
    const { id, token } = await h.senior();
    await h.seed(id, LOW, 6, 5, 4);
    // The morning sweep's job, as its schedule sends it.
    await h.rt.dreams.boss.send(SWEEP_QUEUE, {});
    const [first] = await receiver.posted(id, 1, POST_BOUND_MS);
    expect(first!.body).toMatchObject({ kind: 'tier_streak', open: true, from: shiftDay(today(), -6), to: shiftDay(today(), -4), days: 3 });

    await h.seed(id, FINE, 3);
    await h.seed(id, LOW, 2, 1);
    await h.session(token, LOW);
    const posts = await receiver.posted(id, 2, POST_BOUND_MS);
    expect(posts[1]!.body).toMatchObject({ kind: 'tier_streak', open: true, from: shiftDay(today(), -2), to: today(), days: 3 });
    expect(posts[1]!.body.id).not.toBe(first!.body.id);
    expect(await h.deliveryJobs(id)).toBe(2);

    const caregiver = generateToken('caregiver');
    await h.rt.directory.linkCaregiver(await h.rt.directory.addApiToken('caregiver', caregiver, 'fille de Germaine'), id);
    const expected = {
      seniorId: id,
      alerts: [
        { kind: 'tier_streak', open: true, from: shiftDay(today(), -2), to: today(), days: 3, tier: 'preoccupant' },
        { kind: 'tier_streak', open: false, from: shiftDay(today(), -6), to: shiftDay(today(), -4), days: 3, tier: 'preoccupant' },
      ],
    };
    expect(await api('GET', `/v1/admin/seniors/${id}/mood-alerts`)).toEqual({ status: 200, body: expected });
    expect(await api('GET', `/v1/admin/seniors/${id}/mood-alerts`, undefined, caregiver)).toEqual({ status: 200, body: expected });

    const exported = await api('GET', `/v1/admin/seniors/${id}/export`);
    expect(exported.body.tables.caregiver_alerts.map((r: { from_day: string; open: boolean }) => [r.from_day, r.open]).sort()).toEqual([
      [shiftDay(today(), -6), false],
      [shiftDay(today(), -2), true],
    ]);
    expect(JSON.stringify(exported.body.tables.caregiver_alerts)).not.toContain('CANARI');
  });

  it('reads a weekly drop, and answers only admins and linked caregivers', async () => {
    const { id } = await h.senior();
    await h.seed(id, 80, 13, 12, 11, 10, 9, 8, 7);
    // Day -3: (3×80 + 4×55)/7 = 65.7, 14.3 under 80; day -2: (2×80 + 5×55)/7 = 62.1, 17.9 under: the drop starts.
    await h.seed(id, 55, 6, 5, 4, 3, 2, 1, 0);
    const res = await api('GET', `/v1/admin/seniors/${id}/mood-alerts`);
    expect(res).toEqual({
      status: 200,
      body: { seniorId: id, alerts: [{ kind: 'weekly_drop', open: true, from: shiftDay(today(), -2), to: today(), days: 3, previousAverage: 80, average: 55, drop: 25 }] },
    });
    const stranger = generateToken('caregiver');
    await h.rt.directory.addApiToken('caregiver', stranger, 'autre aidant');
    expect(await api('GET', `/v1/admin/seniors/${id}/mood-alerts`, undefined, stranger)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await api('GET', `/v1/admin/seniors/${id}/mood-alerts`, undefined, null)).toMatchObject({ status: 401 });
    expect(await api('GET', '/v1/admin/seniors/00000000-0000-4000-8000-000000000000/mood-alerts')).toMatchObject({ status: 404 });
    expect(await api('GET', '/v1/admin/seniors/pas-un-id/mood-alerts')).toMatchObject({ status: 400, body: { error: 'bad_request' } });
  });

  it('erasure deletes the senior’s episodes, and a post still to be tried for them posts nothing', async () => {
    const { id, token } = await h.senior();
    receiver.statuses.set(id, [500]);
    let release!: () => void;
    receiver.holds.set(id, new Promise<void>((resolve) => (release = resolve)));
    await h.seed(id, LOW, 2, 1);
    await h.session(token, LOW);
    // The first try is in flight (held by the receiver) when the senior is erased; it then fails.
    const [post] = await receiver.posted(id, 1, POST_BOUND_MS);
    const erased = await api('DELETE', `/v1/admin/seniors/${id}/data`);
    expect(erased.body.erased.caregiver_alerts).toBe(1);
    release();
    const notPosted = () => h.rt.logs.lines.some((l) => l.includes('caregiver alert not posted') && l.includes(String(post!.body.id)) && l.includes('"outcome":"erased"'));
    await expect.poll(notPosted, { timeout: RETRY_BOUND_MS }).toBe(true);
    expect(receiver.of(id)).toHaveLength(1);
    expect(await h.rows(id)).toEqual([]);
  });
});

describe('without a webhook', () => {
  it('records the episode and shows it, and posts nothing', async () => {
    const h = await alertsRuntime({});
    try {
      const { id, token } = await h.senior();
      await h.seed(id, LOW, 2, 1);
      await h.session(token, LOW);
      await expect.poll(() => h.evaluations(id), { timeout: POST_BOUND_MS }).toBeGreaterThan(0);
      expect(await h.rows(id)).toEqual([{ kind: 'tier_streak', from: shiftDay(today(), -2), open: true, delivery: 'none' }]);
      expect(await h.deliveryJobs(id)).toBe(0);
      expect((await adminApi(h.rt)('GET', `/v1/admin/seniors/${id}/mood-alerts`)).body.alerts).toHaveLength(1);
    } finally {
      await h.rt.close();
    }
  });
});

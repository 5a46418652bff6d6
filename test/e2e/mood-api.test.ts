import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { moodTier } from '../../machines/memory/derivation.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime;
let senior: string;
let other: string;
let admin: string;
let linked: string;
let unlinked: string;
let operator: string;

async function get(path: string, token: string | null = admin) {
  const res = await rt.app.inject({ method: 'GET', url: path, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.statusCode, body: res.json() as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}
const insert = (seniorId: string, score: number, at: string, summary: string | null = `Résumé ${at}`) =>
  rt.moodScores.insert({ seniorId, score, tier: moodTier(score), summary, recordedAt: new Date(at) });

beforeAll(async () => {
  rt = await startTestRuntime();
  admin = rt.seed!.adminToken;
  senior = await rt.directory.createSenior({ displayName: 'Rose' });
  other = await rt.directory.createSenior({ displayName: 'Henri' });
  linked = generateToken('caregiver');
  unlinked = generateToken('caregiver');
  operator = generateToken('operator');
  await rt.directory.linkCaregiver(await rt.directory.addApiToken('caregiver', linked, 'fille de Rose'), senior);
  await rt.directory.addApiToken('caregiver', unlinked, 'autre aidant');
  await rt.directory.addApiToken('operator', operator, 'ops');
  // 23 captures over November, three of them at the very same instant (the id breaks the tie).
  for (let i = 0; i < 20; i++) await insert(senior, 10 + i * 4, `2026-11-${String(i + 1).padStart(2, '0')}T09:00:00Z`);
  for (let i = 0; i < 3; i++) await insert(senior, 55, '2026-11-21T09:00:00Z');
  await insert(other, 90, '2026-11-10T09:00:00Z');
});
afterAll(() => rt.close());

describe('GET /v1/admin/seniors/:id/mood-entries', () => {
  it('pages newest first with an opaque cursor; a walk returns every row once, in order, under concurrent inserts', async () => {
    const seen: Array<{ id: string; recordedAt: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await get(`/v1/admin/seniors/${senior}/mood-entries?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data);
      cursor = page.body.nextCursor;
      pages += 1;
      // Captures land while the caregiver pages: newer than every page already read.
      await insert(senior, 60, new Date(Date.UTC(2026, 11, pages)).toISOString());
    } while (cursor);
    const original = seen.filter((e) => e.recordedAt < '2026-12');
    expect(original).toHaveLength(23);
    expect(new Set(original.map((e) => e.id)).size).toBe(23);
    expect(seen).toHaveLength(23);
    const keys = seen.map((e) => `${e.recordedAt}|${e.id}`);
    expect(keys).toEqual([...keys].sort().reverse());
    expect(pages).toBe(5);
  });

  it('returns summaries, never transcripts, and only this senior’s rows', async () => {
    const page = await get(`/v1/admin/seniors/${other}/mood-entries`);
    expect(page.body.data).toEqual([{ id: expect.any(String), score: 90, tier: 'enjoue', source: 'per_turn', summary: 'Résumé 2026-11-10T09:00:00Z', recordedAt: '2026-11-10T09:00:00.000000Z' }]);
    expect(page.body.nextCursor).toBeNull();
  });

  it('combines source, from and to filters; limit defaults to 50', async () => {
    const page = await get(`/v1/admin/seniors/${senior}/mood-entries?source=per_turn&from=2026-11-05&to=2026-11-08T00:00:00%2B00:00`);
    expect(page.body.data.map((e: { recordedAt: string }) => e.recordedAt.slice(0, 10))).toEqual(['2026-11-07', '2026-11-06', '2026-11-05']);
    const all = await get(`/v1/admin/seniors/${senior}/mood-entries`);
    expect(all.body.data.length).toBeLessThanOrEqual(50);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=dix', 'limit'],
    ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['from=hier', 'from'],
    ['to=2026-13-45', 'to'],
    ['source=daily', 'source'],
  ])('?%s → 400 naming %s', async (query, name) => {
    const res = await get(`/v1/admin/seniors/${senior}/mood-entries?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(name);
  });
});

describe('GET /v1/admin/seniors/:id/mood-timeline', () => {
  it('rolls up Europe/Paris days: average, min, max, count, dominant tier', async () => {
    const res = await get(`/v1/admin/seniors/${senior}/mood-timeline?from=2026-11-01&to=2026-11-03`);
    expect(res.body).toEqual({
      seniorId: senior,
      timezone: 'Europe/Paris',
      days: [
        { day: '2026-11-01', average: 10, min: 10, max: 10, count: 1, dominantTier: 'preoccupant' },
        { day: '2026-11-02', average: 14, min: 14, max: 14, count: 1, dominantTier: 'preoccupant' },
      ],
    });
  });

  it('counts a capture in its Paris day across the DST change, and breaks tier ties toward concern', async () => {
    const rene = await rt.directory.createSenior({ displayName: 'René' });
    await insert(rene, 80, '2026-10-24T22:30:00Z'); // 00:30 in Paris (UTC+2): Oct 25
    await insert(rene, 20, '2026-10-25T22:30:00Z'); // 23:30 in Paris (UTC+1): still Oct 25
    await insert(rene, 60, '2026-10-26T10:00:00Z');
    const res = await get(`/v1/admin/seniors/${rene}/mood-timeline`);
    expect(res.body.days).toEqual([
      { day: '2026-10-25', average: 50, min: 20, max: 80, count: 2, dominantTier: 'preoccupant' },
      { day: '2026-10-26', average: 60, min: 60, max: 60, count: 1, dominantTier: 'neutre' },
    ]);
  });
});

describe('who may read mood data (INV-P05)', () => {
  it.each([
    ['admin', () => admin, 200],
    ['a caregiver linked to the senior', () => linked, 200],
    ['a caregiver not linked to the senior', () => unlinked, 403],
    ['an operator', () => operator, 403],
    ['no token', () => null, 401],
  ])('%s → %i', async (_who, token, status) => {
    expect((await get(`/v1/admin/seniors/${senior}/mood-entries`, token())).status).toBe(status);
    expect((await get(`/v1/admin/seniors/${senior}/mood-timeline`, token())).status).toBe(status);
  });

  it('a linked caregiver still cannot read another senior', async () => {
    expect((await get(`/v1/admin/seniors/${other}/mood-entries`, linked)).status).toBe(403);
  });

  it('admin gets 404 for an unknown senior', async () => {
    expect((await get('/v1/admin/seniors/00000000-0000-4000-8000-000000000000/mood-entries')).status).toBe(404);
  });
});

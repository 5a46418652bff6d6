import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seniorTables } from '../../adapters/postgres/pg-erasure.repository.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** The facts listing and the data export, over real HTTP on the real server. */
let rt: TestRuntime;
let api: ReturnType<typeof adminApi>;
let rose: string;
let caregiver: string;
let stranger: string;
let operator: string;
const unknown = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  rt = await startTestRuntime({ apiDocs: true });
  api = adminApi(rt);
  rose = await rt.directory.createSenior({ displayName: 'Rose' });
  for (const c of ['conversation', 'contacts', 'profil', 'sante'] as const) await rt.consents.grant(rose, c);
  caregiver = generateToken('caregiver');
  stranger = generateToken('caregiver');
  operator = generateToken('operator');
  await rt.directory.linkCaregiver(await rt.directory.addApiToken('caregiver', caregiver, 'fille de Rose'), rose);
  await rt.directory.addApiToken('caregiver', stranger, 'autre aidant');
  await rt.directory.addApiToken('operator', operator, 'ops');
});
afterAll(() => rt.close());

describe('GET /v1/admin/seniors/:id/facts', () => {
  let facts: string[];
  let superseded: string;

  beforeAll(async () => {
    // 12 facts, written in one statement each: several share a created_at only when the clock does.
    facts = [];
    for (let i = 0; i < 12; i++) {
      const res = await api('POST', `/v1/admin/seniors/${rose}/facts`, { content: `Elle a planté ${i + 1} rosiers au printemps.`, category: 'profil' });
      expect(res.status).toBe(201);
      facts.push(res.body.id);
    }
    const moved = await rt.memory.memory.persist({ seniorId: rose, content: 'Sa fille Claire vit désormais à Nantes.', category: 'contacts', supersedes: facts[0]! });
    superseded = facts[0]!;
    facts.push(moved.id);
    await rt.memory.memory.persist({ seniorId: rose, content: 'Elle prend un traitement pour la tension.', category: 'sante' });
  });

  it('pages every fact once, newest first, with category, created time and validity', async () => {
    const seen: Array<{ id: string; createdAt: string; invalidAt: string | null; valid: boolean; category: string; content: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await api('GET', `/v1/admin/seniors/${rose}/facts?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.seniorId).toBe(rose);
      seen.push(...page.body.data);
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(14);
    expect(new Set(seen.map((f) => f.id)).size).toBe(14);
    const keys = seen.map((f) => `${f.createdAt}|${f.id}`);
    expect(keys).toEqual([...keys].sort().reverse());
    expect(seen.find((f) => f.id === superseded)).toMatchObject({ valid: false, invalidAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/) });
    expect(seen.filter((f) => !f.valid)).toHaveLength(1);
    expect(seen[0]).toEqual({ id: expect.any(String), content: 'Elle prend un traitement pour la tension.', category: 'sante', createdAt: expect.any(String), invalidAt: null, valid: true });
  });

  it('the linked caregiver reads them too, only of the categories whose consent is active; another caregiver gets 403', async () => {
    await rt.consents.revoke(rose, 'sante');
    try {
      const page = await api('GET', `/v1/admin/seniors/${rose}/facts?limit=200`, undefined, caregiver);
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(13);
      expect(page.body.data.map((f: { category: string }) => f.category)).not.toContain('sante');
      expect((await api('GET', `/v1/admin/seniors/${rose}/facts?limit=200`)).body.data).toHaveLength(14);
    } finally {
      await rt.consents.grant(rose, 'sante');
    }
    expect(await api('GET', `/v1/admin/seniors/${rose}/facts`, undefined, stranger)).toMatchObject({ status: 403, body: { error: 'forbidden', message: 'this caregiver is not linked to that senior' } });
    expect(await api('GET', `/v1/admin/seniors/${unknown}/facts`, undefined, stranger)).toMatchObject({ status: 403 });
  });

  it('clear errors: unknown senior 404, bad cursor or limit 400, no token 401, another role 403', async () => {
    expect(await api('GET', `/v1/admin/seniors/${unknown}/facts`)).toMatchObject({ status: 404, body: { error: 'not_found', message: 'no such senior' } });
    const bad = await api('GET', `/v1/admin/seniors/${rose}/facts?cursor=not-a-cursor`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('cursor is not one this API returned');
    const forged = Buffer.from(JSON.stringify(['2026-13-40T00:00:00Z', 'x'])).toString('base64url');
    expect((await api('GET', `/v1/admin/seniors/${rose}/facts?cursor=${forged}`)).status).toBe(400);
    const limit = await api('GET', `/v1/admin/seniors/${rose}/facts?limit=0`);
    expect(limit).toMatchObject({ status: 400 });
    expect(limit.body.message).toContain('limit must be an integer from 1 to 200');
    expect((await api('GET', `/v1/admin/seniors/not-a-uuid/facts`)).status).toBe(400);
    expect(await api('GET', `/v1/admin/seniors/${rose}/facts`, undefined, null)).toMatchObject({ status: 401 });
    expect(await api('GET', `/v1/admin/seniors/${rose}/facts`, undefined, operator)).toMatchObject({ status: 403 });
  });
});

describe('GET /v1/admin/seniors/:id/export', () => {
  it('holds a row of every table erasure deletes from — the same list — and erasure then removes exactly those', async () => {
    const paul = await rt.directory.createSenior({ displayName: 'Paul', preferredName: 'Paulo' });
    const q = (sql: string, params: unknown[] = [paul]) => rt.db.pool.query(sql, params);
    // One row in every table that has a senior_id column.
    await rt.consents.grant(paul, 'conversation');
    await rt.directory.addDevice(paul, generateToken('kiosk'));
    await rt.directory.linkCaregiver(await rt.directory.addApiToken('caregiver', generateToken('caregiver'), 'fils de Paul'), paul);
    expect((await api('POST', `/v1/admin/seniors/${paul}/facts`, { content: 'Il aime la pêche à la ligne.', category: 'profil' })).status).toBe(201);
    await rt.moodScores.insert({ seniorId: paul, score: 70, tier: 'enjoue', summary: 'Le senior a évoqué la pêche.', recordedAt: new Date('2026-11-30T09:00:00Z') });
    await q(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, 'Une séance sur la pêche.', now(), now(), 3)`);
    expect((await api('PUT', `/v1/admin/seniors/${paul}/persona`, { persona: 'Un compagnon pêcheur.' })).status).toBe(200);
    expect((await api('PUT', `/v1/admin/seniors/${paul}/profile`, { interlocutor: { interests: ['pêche'] } })).status).toBe(200);
    await q(`INSERT INTO consolidation_candidates (senior_id, pattern, category, seen_on) VALUES ($1, 'Il parle souvent de pêche.', 'profil', ARRAY['2026-11-30']::date[])`);
    await q(`INSERT INTO consolidation_runs (senior_id, day, report) VALUES ($1, '2026-11-30', '{}')`);
    await q(`INSERT INTO caregiver_alerts (senior_id, kind, from_day, to_day, open, days, delivery) VALUES ($1, 'tier_streak', '2026-11-28', '2026-11-30', true, 3, 'none')`);
    // A live process of its own: the presence sweep (every PRESENCE_HEARTBEAT_MS) removes the rows of a process it does not know.
    await q(`INSERT INTO presence_processes (process_id) VALUES ('elsewhere') ON CONFLICT (process_id) DO UPDATE SET heartbeat_at = now()`, []);
    await q(`INSERT INTO session_presence (session_id, senior_id, process_id) VALUES (gen_random_uuid(), $1, 'elsewhere')`);

    const catalogue = (
      await rt.db.pool.query<{ table_name: string }>(`SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'senior_id'`)
    ).rows.map((r) => r.table_name);
    const exported = await api('GET', `/v1/admin/seniors/${paul}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body).toMatchObject({ seniorId: paul, senior: { id: paul, display_name: 'Paul', preferred_name: 'Paulo' } });
    expect(Object.keys(exported.body.tables).sort()).toEqual([...catalogue].sort());
    expect(Object.keys(exported.body.tables).sort()).toEqual((await seniorTables(rt.db.pool)).sort());
    for (const table of catalogue) expect(exported.body.tables[table], table).toHaveLength(1);
    expect(exported.body.tables.memory_facts[0]).toMatchObject({ fact: 'Il aime la pêche à la ligne.', category: 'profil', invalid_at: null });
    expect(exported.body.tables.mood_scores[0]).toMatchObject({ score: 70, summary: 'Le senior a évoqué la pêche.' });
    expect(exported.body.omitted).toEqual({ devices: ['token_hash'], memory_facts: ['embedding'], segments: ['embedding'] });
    expect(exported.body.tables.memory_facts[0]).not.toHaveProperty('embedding');
    expect(exported.body.tables.devices[0]).not.toHaveProperty('token_hash');

    const erased = await api('DELETE', `/v1/admin/seniors/${paul}/data`);
    const tablesErased = Object.keys(erased.body.erased).filter((k) => k !== 'zep' && k !== 'seniors' && k !== 'semantic_cache' && erased.body.erased[k] > 0);
    expect(tablesErased.sort()).toEqual(Object.keys(exported.body.tables).sort());
    expect(await api('GET', `/v1/admin/seniors/${paul}/export`)).toMatchObject({ status: 404, body: { error: 'not_found', message: 'no such senior' } });
  });

  it('is for admins only: a linked caregiver gets 403, no token 401; an unknown senior 404, a bad id 400', async () => {
    expect(await api('GET', `/v1/admin/seniors/${rose}/export`, undefined, caregiver)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await api('GET', `/v1/admin/seniors/${rose}/export`, undefined, null)).toMatchObject({ status: 401 });
    expect(await api('GET', `/v1/admin/seniors/${unknown}/export`)).toMatchObject({ status: 404, body: { message: 'no such senior' } });
    expect((await api('GET', '/v1/admin/seniors/nope/export')).status).toBe(400);
  });

  it('both routes are in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${rt.url}/docs/json`)).json()) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>> };
    expect(doc.paths['/v1/admin/seniors/{id}/facts']?.get?.parameters?.map((p) => p.name).sort()).toEqual(['cursor', 'id', 'limit']);
    expect(doc.paths['/v1/admin/seniors/{id}/export']?.get).toBeDefined();
  });
});

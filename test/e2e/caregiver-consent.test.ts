import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * INV-C01 on the caregivers' side: what a caregiver reads that was derived from the conversation
 * (mood-entry summaries, facts) follows the senior's `conversation` consent; the admin export says
 * under which consent each part it holds was collected. Real server, real PGlite.
 */
let rt: TestRuntime;
let api: ReturnType<typeof adminApi>;
let jeanne: string;
let caregiver: string;
const SUMMARY = 'Jeanne a raconté sa promenade au bord du canal avec son petit-fils.';
const SEGMENT = 'Une séance sur les promenades du dimanche.';
const FACT = 'Elle se promène le long du canal le dimanche.';

beforeAll(async () => {
  rt = await startTestRuntime();
  api = adminApi(rt);
  jeanne = await rt.directory.createSenior({ displayName: 'Jeanne' });
  for (const c of CONSENT_CATEGORIES) await rt.consents.grant(jeanne, c);
  caregiver = generateToken('caregiver');
  await rt.directory.linkCaregiver(await rt.directory.addApiToken('caregiver', caregiver, 'fils de Jeanne'), jeanne);
  await rt.moodScores.insert({ seniorId: jeanne, score: 72, tier: 'enjoue', summary: SUMMARY, recordedAt: new Date('2026-11-29T10:00:00Z') });
  await rt.memory.memory.persist({ seniorId: jeanne, content: FACT, category: 'profil' });
  await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, $2, now(), now(), 4)`, [jeanne, SEGMENT]);
});
afterAll(() => rt.close());

const asCaregiver = (path: string) => api('GET', path, undefined, caregiver);

describe('a caregiver and the conversation consent', () => {
  it('reads summaries and facts while it is granted, and none of their text once it is revoked; scores stay', async () => {
    const before = await asCaregiver(`/v1/admin/seniors/${jeanne}/mood-entries`);
    expect(before.body.data).toEqual([expect.objectContaining({ score: 72, tier: 'enjoue', summary: SUMMARY })]);
    expect((await asCaregiver(`/v1/admin/seniors/${jeanne}/facts`)).body.data.map((f: { content: string }) => f.content)).toEqual([FACT]);

    expect((await api('DELETE', `/v1/admin/seniors/${jeanne}/consents/conversation`)).body).toMatchObject({ category: 'conversation', active: false });
    const entries = await asCaregiver(`/v1/admin/seniors/${jeanne}/mood-entries`);
    expect(entries.status).toBe(200);
    expect(entries.body.data).toEqual([expect.objectContaining({ score: 72, tier: 'enjoue', summary: null })]);
    const facts = await asCaregiver(`/v1/admin/seniors/${jeanne}/facts?limit=200`);
    expect(facts).toMatchObject({ status: 200, body: { data: [], nextCursor: null } });
    const timeline = await asCaregiver(`/v1/admin/seniors/${jeanne}/mood-timeline`);
    expect(timeline.body.days).toEqual([expect.objectContaining({ day: '2026-11-29', average: 72, count: 1 })]);
    // No word of what was derived from the conversation, in any answer a caregiver gets.
    for (const answer of [entries, facts, timeline]) {
      const text = JSON.stringify(answer.body);
      for (const derived of [SUMMARY, SEGMENT, FACT]) expect(text).not.toContain(derived);
    }

    // The admin still reads everything held (to answer an access request, or erase it).
    expect((await api('GET', `/v1/admin/seniors/${jeanne}/mood-entries`)).body.data[0].summary).toBe(SUMMARY);
    expect((await api('GET', `/v1/admin/seniors/${jeanne}/facts`)).body.data).toHaveLength(1);

    // Granted again: the caregiver reads them again (nothing was deleted by the revocation).
    expect((await api('PUT', `/v1/admin/seniors/${jeanne}/consents/conversation`)).status).toBe(200);
    expect((await asCaregiver(`/v1/admin/seniors/${jeanne}/mood-entries`)).body.data[0].summary).toBe(SUMMARY);
    expect((await asCaregiver(`/v1/admin/seniors/${jeanne}/facts`)).body.data).toHaveLength(1);
  });

  it('the export says under which consent each part was collected and whether it is granted now', async () => {
    await rt.consents.revoke(jeanne, 'sante');
    try {
      const exported = await api('GET', `/v1/admin/seniors/${jeanne}/export`);
      expect(exported.status).toBe(200);
      const sections = exported.body.consents as Array<{ consent: string | null; granted: boolean | null; revokedAt: string | null; holds: Array<{ table: string; where?: Record<string, string>; columns?: string[]; note?: string }> }>;
      expect(sections.map((s) => s.consent)).toEqual([...CONSENT_CATEGORIES, null]);
      const of = (consent: string | null) => sections.find((s) => s.consent === consent)!;
      expect(of('conversation')).toMatchObject({ granted: true, revokedAt: null });
      expect(of('conversation').holds.map((p) => p.table)).toEqual(expect.arrayContaining(['mood_scores', 'segments', 'consolidation_runs']));
      expect(of('sante')).toMatchObject({ granted: false, revokedAt: expect.any(String), holds: expect.arrayContaining([{ table: 'memory_facts', where: { category: 'sante' } }]) });
      expect(of('profil')).toMatchObject({ granted: true, holds: expect.arrayContaining([{ table: 'memory_facts', where: { category: 'profil' } }]) });
      expect(of(null)).toMatchObject({ granted: null, basis: expect.any(String) });
      expect(of(null).holds.map((p) => p.table)).toEqual(expect.arrayContaining(['devices', 'consents', 'caregiver_seniors']));
      // Every table of the document is said to be held under a consent or the service, none unlabelled.
      const labelled = new Set(sections.flatMap((s) => s.holds.filter((p) => !p.note?.startsWith('unlabelled')).map((p) => p.table)));
      for (const table of Object.keys(exported.body.tables)) expect(labelled.has(table), table).toBe(true);
    } finally {
      await rt.consents.grant(jeanne, 'sante');
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEUTRAL_REPLY } from '../../adapters/fluxes/memory-flux.adapter.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { topicEmbedder } from '../support/embeddings.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, systemPromptOf } from '../support/models.ts';
import { adminApi, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const QUESTION = 'est-ce que ma fille passe ce week-end ?';
const DAUGHTER = 'sa fille Claire habite à Lyon';

const topics = topicEmbedder({ [QUESTION]: { 0: 0.9, 1: 0.3 }, [DAUGHTER]: { 0: 1 } });
/** The runtime's embedder, with a switch that makes it hang (a memory slower than its budget). */
const embedder: MemoryEmbedderPort & { hang: boolean; calls: number } = {
  modelId: topics.modelId,
  hang: false,
  calls: 0,
  embed(texts) {
    this.calls += 1;
    return this.hang ? new Promise(() => {}) : topics.embed(texts);
  },
};
const model = streamingModel(['Bien ', 'sûr.']);

let rt: TestRuntime;
let kiosk: KioskClient;
let marie: string;
let operatorToken: string;

let api: ReturnType<typeof adminApi>;
const lastSystemPrompt = () => systemPromptOf(model);

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: model, embedder }, { RECALL_BUDGET_MS: '150' });
  api = adminApi(rt);
  marie = rt.seed!.seniorId;
  operatorToken = generateToken('operator');
  await rt.directory.addApiToken('operator', operatorToken, 'test operator');
  kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
});
afterAll(async () => {
  kiosk.close();
  await rt.close();
});

describe('admin API: authentication and validation', () => {
  it('401 without a token or with an unknown one, 403 for another role, with a clear body', async () => {
    expect(await api('GET', `/v1/admin/seniors/${marie}/consents`, undefined, null)).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(await api('GET', `/v1/admin/seniors/${marie}/consents`, undefined, KIOSK_TOKEN)).toMatchObject({ status: 401, body: { message: 'unknown API token' } });
    const forbidden = await api('GET', `/v1/admin/seniors/${marie}/consents`, undefined, operatorToken);
    expect(forbidden).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(forbidden.body.message).toContain('admin');
  });

  it('400 naming the parameter for a bad category, id or body; 404 for an unknown senior', async () => {
    const category = await api('PUT', `/v1/admin/seniors/${marie}/consents/religion`);
    expect(category.status).toBe(400);
    expect(category.body.message).toContain('category');
    const id = await api('GET', '/v1/admin/seniors/not-a-uuid/consents');
    expect(id.status).toBe(400);
    expect(id.body.message).toContain('id');
    const body = await api('POST', `/v1/admin/seniors/${marie}/facts`, { category: 'profil' });
    expect(body.status).toBe(400);
    expect(body.body.message).toContain('content');
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await api('GET', `/v1/admin/seniors/${unknown}/consents`)).status).toBe(404);
    expect((await api('POST', `/v1/admin/seniors/${unknown}/facts`, { content: 'x', category: 'profil' })).status).toBe(404);
  });
});

describe('consents and recall in a live session', () => {
  it('lists the demo senior’s consents: all seven active', async () => {
    const res = await api('GET', `/v1/admin/seniors/${marie}/consents`);
    expect(res.status).toBe(200);
    expect(res.body.consents).toHaveLength(7);
    expect(res.body.consents.every((c: { active: boolean }) => c.active)).toBe(true);
  });

  it('a fact written through the API is recalled into the agent’s context, after the persona', async () => {
    const created = await api('POST', `/v1/admin/seniors/${marie}/facts`, { content: DAUGHTER, category: 'contacts' });
    expect(created).toMatchObject({ status: 201, body: { seniorId: marie, content: DAUGHTER, category: 'contacts' } });
    const done = await kiosk.turn('r1', QUESTION);
    expect(done).toMatchObject({ flux: 'recall', text: 'Bien sûr.' });
    const system = lastSystemPrompt();
    expect(system.indexOf('Tu es Kohami')).toBe(0);
    expect(system.indexOf(DAUGHTER)).toBeGreaterThan(0);
    const messages = model.doStreamCalls.at(-1)!.prompt;
    expect(JSON.stringify(messages.at(-1))).toContain(QUESTION);
  });

  it('revoking the category hides the fact at the next turn', async () => {
    expect((await api('DELETE', `/v1/admin/seniors/${marie}/consents/contacts`)).body).toMatchObject({ category: 'contacts', active: false });
    expect(await kiosk.turn('r2', QUESTION)).toMatchObject({ flux: 'agent' });
    expect(lastSystemPrompt()).not.toContain(DAUGHTER);
    expect((await api('PUT', `/v1/admin/seniors/${marie}/consents/contacts`)).body).toMatchObject({ active: true, revokedAt: null });
    expect(await kiosk.turn('r3', QUESTION)).toMatchObject({ flux: 'recall' });
  });

  it('without the conversation consent: the neutral line, no model call, memory untouched', async () => {
    await api('DELETE', `/v1/admin/seniors/${marie}/consents/conversation`);
    const modelCalls = model.doStreamCalls.length;
    const embedCalls = embedder.calls;
    expect(await kiosk.turn('n1', QUESTION)).toMatchObject({ flux: 'neutral', text: NEUTRAL_REPLY });
    expect(model.doStreamCalls.length).toBe(modelCalls);
    expect(embedder.calls).toBe(embedCalls);
    expect(await kiosk.turn('n2', 'bonjour')).toMatchObject({ flux: 'cache' });
    await api('PUT', `/v1/admin/seniors/${marie}/consents/conversation`);
  });

  it('a memory slower than its budget never blocks the turn: the agent answers without facts', async () => {
    embedder.hang = true;
    try {
      expect(await kiosk.turn('s1', QUESTION)).toMatchObject({ flux: 'agent', text: 'Bien sûr.' });
      expect(lastSystemPrompt()).not.toContain(DAUGHTER);
    } finally {
      embedder.hang = false;
    }
  });

  it('revoking a category never granted is a 404', async () => {
    const other = await rt.directory.createSenior({ displayName: 'Paul' });
    expect((await api('DELETE', `/v1/admin/seniors/${other}/consents/vision`)).status).toBe(404);
  });
});

describe('erasure (RGPD)', () => {
  async function rowsOf(seniorId: string): Promise<Record<string, number>> {
    const tables = await rt.db.pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'senior_id'",
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of tables.rows) {
      const res = await rt.db.pool.query(`SELECT count(*)::int AS n FROM "${table_name}" WHERE senior_id = $1`, [seniorId]);
      counts[table_name] = res.rows[0].n;
    }
    const senior = await rt.db.pool.query('SELECT count(*)::int AS n FROM seniors WHERE id = $1', [seniorId]);
    counts.seniors = senior.rows[0].n;
    return counts;
  }

  it('removes every row of the senior in every table, closes the live session, and is idempotent', async () => {
    const paul = await rt.directory.createSenior({ displayName: 'Paul Martin', preferredName: 'Paul', onboardingDone: true });
    const paulToken = generateToken('kiosk');
    await rt.directory.addDevice(paul, paulToken);
    for (const c of ['conversation', 'profil', 'contacts']) await api('PUT', `/v1/admin/seniors/${paul}/consents/${c}`);
    await api('POST', `/v1/admin/seniors/${paul}/facts`, { content: 'il aime le jardinage', category: 'profil' });
    await api('POST', `/v1/admin/seniors/${paul}/facts`, { content: 'son fils Luc vit à Nantes', category: 'contacts' });
    const caregiver = await rt.directory.addApiToken('caregiver', generateToken('caregiver'), 'Luc');
    await rt.directory.linkCaregiver(caregiver, paul);
    await rt.moodScores.insert({ seniorId: paul, score: 60, tier: 'neutre', summary: 'Le senior a parlé de son jardin.', recordedAt: new Date() });
    await api('PUT', `/v1/admin/seniors/${paul}/persona`, { persona: 'Tu es Kohami, qui parle de jardinage avec Paul.' });
    await api('PUT', `/v1/admin/seniors/${paul}/profile`, { interlocutor: { role: 'jardinier retraité', interests: ['jardinage'] } });
    await rt.db.pool.query(`INSERT INTO consolidation_candidates (senior_id, pattern, category, seen_on) VALUES ($1, 'Il arrose ses tomates le soir', 'profil', '{2026-11-29}')`, [paul]);
    await rt.db.pool.query(`INSERT INTO consolidation_runs (senior_id, day, report) VALUES ($1, '2026-11-29', '{}')`, [paul]);
    await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, 'Le senior a parlé de son jardin.', now(), now(), 3)`, [paul]);
    await rt.db.pool.query(`INSERT INTO caregiver_alerts (senior_id, kind, from_day, to_day, open, days, delivery) VALUES ($1, 'tier_streak', '2026-11-27', '2026-11-29', true, 3, 'none')`, [paul]);
    const paulKiosk = await KioskClient.connect(rt.wsUrl, paulToken);
    await paulKiosk.start();

    const before = await rowsOf(paul);
    // Every table with a senior_id has rows for Paul, so the sweep below proves each one is erased.
    expect(Object.entries(before).filter(([, n]) => n === 0)).toEqual([]);
    const erased = await api('DELETE', `/v1/admin/seniors/${paul}/data`);
    expect(erased).toMatchObject({
      status: 200,
      body: { seniorId: paul, erased: { zep: 0, memory_facts: 2, consents: 3, devices: 1, caregiver_seniors: 1, mood_scores: 1, segments: 1, personas: 1, profiles: 1, consolidation_candidates: 1, consolidation_runs: 1, caregiver_alerts: 1, seniors: 1 } },
    });
    expect(await paulKiosk.next('session.closed')).toMatchObject({ reason: 'erased' });
    expect(rt.registry.get(paul)).toBeUndefined();
    expect(Object.values(await rowsOf(paul)).every((n) => n === 0)).toBe(true);
    await expect(KioskClient.connect(rt.wsUrl, paulToken)).rejects.toMatchObject({ statusCode: 401 });

    const again = await api('DELETE', `/v1/admin/seniors/${paul}/data`);
    expect(again.status).toBe(200);
    expect(Object.values(again.body.erased).every((n) => n === 0)).toBe(true);
    expect((await rowsOf(marie)).seniors).toBe(1);
    paulKiosk.close();
  });
});

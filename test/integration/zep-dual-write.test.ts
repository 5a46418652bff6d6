import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DualWriteMemoryAdapter } from '../../adapters/memory/dual-write-memory.adapter.ts';
import { provideMemory } from '../../adapters/memory/memory-provider.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { PgVectorMemoryAdapter } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { ZepHttpError, ZepMemoryAdapter, ZepNotProvisionedError } from '../../adapters/memory/zep-memory.adapter.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createMetrics } from '../../runtime/metrics.ts';
import { createSenior, migratedDatabase } from '../support/database.ts';
import { topicEmbedder } from '../support/embeddings.ts';
import { FakeZep } from '../support/fake-zep.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
let zepServer: FakeZep;
let consents: PgConsentAdapter;
const logger = createLogger('silent');
const embedder = topicEmbedder({ 'sa fille Claire habite à Lyon': { 0: 1 }, 'ma fille': { 0: 1 } });

beforeAll(async () => {
  db = await migratedDatabase();
  consents = new PgConsentAdapter(db.pool);
  zepServer = await new FakeZep().start();
});
afterAll(async () => {
  await zepServer.stop();
  await db.close();
});
beforeEach(() => {
  zepServer.mode = 'ok';
});

const zep = (settings: Partial<{ baseUrl: string; apiKey: string; timeoutMs: number }> = {}) =>
  new ZepMemoryAdapter({ baseUrl: zepServer.url, apiKey: zepServer.apiKey, timeoutMs: 300, ...settings }, consents);

describe('ZepMemoryAdapter (contract, against a local Zep mimic)', () => {
  it('creates the Zep user on first write, then adds the fact as an edge named by its category', async () => {
    const senior = await createSenior(db);
    const fact = await zep().persist({ seniorId: senior, content: 'sa fille Claire habite à Lyon', category: 'contacts' });
    expect(zepServer.users.get(senior)).toEqual([expect.objectContaining({ uuid: fact.id, fact: 'sa fille Claire habite à Lyon', name: 'CONTACTS' })]);
    expect(zepServer.calls.slice(-3)).toEqual(['POST /api/v2/graph/add-fact-triple', 'POST /api/v2/users', 'POST /api/v2/graph/add-fact-triple']);
  });

  it('searches the senior’s edges and keeps only consented categories (INV-C01)', async () => {
    const senior = await createSenior(db, ['conversation', 'contacts']);
    await zep().persist({ seniorId: senior, content: 'sa fille Claire habite à Lyon', category: 'contacts' });
    await zep().persist({ seniorId: senior, content: 'sa fille lui rappelle ses médicaments', category: 'sante' });
    const found = await zep().search('ma fille', senior, 5);
    expect(found.map((f) => f.category)).toEqual(['contacts']);
    expect(await zep().search('ma fille', await createSenior(db), 5)).toEqual([]);
  });

  it('reports Zep’s refusals and failures as errors: bad key, over-long fact, 500, timeout', async () => {
    const senior = await createSenior(db);
    await expect(zep({ apiKey: 'wrong' }).search('x', senior, 5)).rejects.toMatchObject({ name: 'ZepHttpError', status: 401 });
    await expect(zep().persist({ seniorId: senior, content: 'x'.repeat(60), category: 'profil' })).rejects.toMatchObject({ status: 400 });
    zepServer.mode = 'error';
    await expect(zep().search('x', senior, 5)).rejects.toBeInstanceOf(ZepHttpError);
    zepServer.mode = 'hang';
    await expect(zep().search('x', senior, 5)).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('deleteSenior deletes the Zep user and counts its facts; idempotent', async () => {
    const senior = await createSenior(db);
    await zep().persist({ seniorId: senior, content: 'il aime le jardinage', category: 'profil' });
    await zep().persist({ seniorId: senior, content: 'son chat s’appelle Minou', category: 'profil' });
    expect(await zep().deleteSenior(senior)).toBe(2);
    expect(zepServer.users.has(senior)).toBe(false);
    expect(await zep().deleteSenior(senior)).toBe(0);
  });

  it('without ZEP_API_URL: persist and search throw ZepNotProvisionedError, deleteSenior returns 0', async () => {
    const unprovisioned = new ZepMemoryAdapter({}, consents);
    const senior = await createSenior(db);
    await expect(unprovisioned.persist({ seniorId: senior, content: 'x', category: 'profil' })).rejects.toThrow(ZepNotProvisionedError);
    await expect(unprovisioned.search('x', senior, 5)).rejects.toThrow(ZepNotProvisionedError);
    expect(await unprovisioned.deleteSenior(senior)).toBe(0);
  });
});

describe('DualWriteMemoryAdapter (R-03)', () => {
  function dual() {
    const metrics = createMetrics();
    const pg = new PgVectorMemoryAdapter(db.pool, embedder, logger);
    return { adapter: new DualWriteMemoryAdapter(zep(), pg, metrics.dualWrite, logger), pg, metrics };
  }
  type Labels = Record<'backend' | 'operation' | 'outcome', string>;
  const count = async (metrics: ReturnType<typeof createMetrics>, labels: Labels) =>
    (await metrics.dualWrite.get()).values.find((v) => (Object.keys(labels) as Array<keyof Labels>).every((k) => v.labels[k] === labels[k]))?.value ?? 0;

  it('writes both stores under one id, and reads Zep', async () => {
    const { adapter, metrics } = dual();
    const senior = await createSenior(db);
    const fact = await adapter.persist({ seniorId: senior, content: 'sa fille Claire habite à Lyon', category: 'contacts' });
    expect(zepServer.users.get(senior)![0]!.uuid).toBe(fact.id);
    const inPg = await db.pool.query('SELECT id FROM memory_facts WHERE senior_id = $1', [senior]);
    expect(inPg.rows).toEqual([{ id: fact.id }]);
    expect((await adapter.search('ma fille', senior, 5)).map((f) => f.id)).toEqual([fact.id]);
    expect(await count(metrics, { backend: 'zep', operation: 'persist', outcome: 'ok' })).toBe(1);
    expect(await count(metrics, { backend: 'pgvector', operation: 'persist', outcome: 'ok' })).toBe(1);
    expect(await count(metrics, { backend: 'zep', operation: 'search', outcome: 'ok' })).toBe(1);
  });

  it('a Zep failure loses no fact: pgvector has it, the failure is counted, and search falls back', async () => {
    const { adapter, metrics } = dual();
    const senior = await createSenior(db);
    zepServer.mode = 'error';
    const fact = await adapter.persist({ seniorId: senior, content: 'sa fille Claire habite à Lyon', category: 'contacts' });
    expect((await adapter.search('ma fille', senior, 5)).map((f) => f.id)).toEqual([fact.id]);
    expect(await count(metrics, { backend: 'zep', operation: 'persist', outcome: 'error' })).toBe(1);
    expect(await count(metrics, { backend: 'zep', operation: 'search', outcome: 'error' })).toBe(1);
    expect(await count(metrics, { backend: 'pgvector', operation: 'search', outcome: 'ok' })).toBe(1);
    expect(await metrics.registry.metrics()).toContain('kohami_memory_dual_write_total{backend="zep",operation="persist",outcome="error"} 1');
  });

  it('a fact already held is written to neither store again; an update deletes the superseded edge in Zep', async () => {
    const { adapter, metrics } = dual();
    const senior = await createSenior(db);
    const first = await adapter.persist({ seniorId: senior, content: 'sa fille Claire habite à Lyon', category: 'contacts' });
    const again = await adapter.persist({ seniorId: senior, content: 'Sa fille Claire habite à Lyon.', category: 'contacts' });
    expect(again).toMatchObject({ id: first.id, created: false });
    expect(zepServer.users.get(senior)!.map((e) => e.uuid)).toEqual([first.id]);
    expect(await count(metrics, { backend: 'zep', operation: 'persist', outcome: 'ok' })).toBe(1);
    const moved = await adapter.persist({ seniorId: senior, content: 'sa fille Claire vit à Nantes', category: 'contacts', supersedes: first.id });
    expect(zepServer.users.get(senior)!.map((e) => e.uuid)).toEqual([moved.id]);
    expect((await adapter.search('ma fille', senior, 5)).map((f) => f.id)).toEqual([moved.id]);
  });

  it('an invalidation Zep missed is never recalled: Zep’s answers are checked against pgvector', async () => {
    const { adapter, metrics } = dual();
    const senior = await createSenior(db);
    const fact = await adapter.persist({ seniorId: senior, content: 'sa fille Claire habite à Lyon', category: 'contacts' });
    zepServer.mode = 'error';
    expect(await adapter.invalidate(senior, fact.id)).toBe(true);
    expect(await count(metrics, { backend: 'zep', operation: 'invalidate', outcome: 'error' })).toBe(1);
    zepServer.mode = 'ok';
    expect(zepServer.users.get(senior)!.map((e) => e.uuid)).toEqual([fact.id]);
    expect(await adapter.search('ma fille', senior, 5)).toEqual([]);
    expect(await adapter.invalidate(senior, fact.id)).toBe(false);
  });

  it('deleteSenior deletes in both and returns the sum; a failing store fails the erasure', async () => {
    const { adapter } = dual();
    const senior = await createSenior(db);
    await adapter.persist({ seniorId: senior, content: 'il aime le jardinage', category: 'profil' });
    zepServer.mode = 'error';
    await expect(adapter.deleteSenior(senior)).rejects.toBeInstanceOf(ZepHttpError);
    zepServer.mode = 'ok';
    expect(await adapter.deleteSenior(senior)).toBe(1);
    expect(await adapter.deleteSenior(senior)).toBe(0);
  });
});

describe('MemoryProvider', () => {
  const deps = () => ({ pool: db.pool, embedder, consents, dualWriteCounter: createMetrics().dualWrite, logger });

  it('chooses the dual-write when Zep URL and key are set', () => {
    const provided = provideMemory({ ...deps(), zep: { baseUrl: zepServer.url, apiKey: zepServer.apiKey } });
    expect(provided.kind).toBe('dual-write');
    expect(provided.memory).toBeInstanceOf(DualWriteMemoryAdapter);
  });

  it('runs on pgvector alone otherwise', () => {
    const provided = provideMemory({ ...deps(), zep: {} });
    expect(provided.kind).toBe('pgvector');
    expect(provided.memory).toBeInstanceOf(PgVectorMemoryAdapter);
  });
});

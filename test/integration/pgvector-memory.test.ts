import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { NoopMemoryEmbedder } from '../../adapters/embedders/noop-memory-embedder.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { INDEXED_SEARCH_SQL, PgVectorMemoryAdapter } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { InvalidFactCategoryError, type MemoryEmbedderPort, type FactCategory } from '../../machines/memory/memory.port.ts';
import { createLogger } from '../../runtime/logger.ts';
import { bulkLoadFacts, createSenior, migratedDatabase } from '../support/database.ts';
import { cosineDistance, randomUnitVectors, topicEmbedder } from '../support/embeddings.ts';
import { startWirePostgres } from '../support/pglite-server.ts';
import { LogCapture } from '../support/runtime.ts';

const QUESTION = 'est-ce que ma fille passe ce week-end ?';
const DAUGHTER = 'sa fille Claire habite à Lyon';
const seedExample = () =>
  topicEmbedder({
    [QUESTION]: { 0: 0.9, 1: 0.3 },
    [DAUGHTER]: { 0: 1 },
    'il aime le jardinage': { 2: 1 },
    'elle prend son traitement le matin': { 3: 1 },
    'son chat s’appelle Minou': { 4: 1, 1: 0.2 },
  });

/** The same adapter behaviour on in-process PGlite and through the pg wire protocol. */
describe.each([
  ['embedded PGlite', false],
  ['pg wire path', true],
])('PgVectorMemoryAdapter on %s', (_name, wire) => {
  let db: Awaited<ReturnType<typeof migratedDatabase>>;
  let server: Awaited<ReturnType<typeof startWirePostgres>> | undefined;
  let consents: PgConsentAdapter;
  const logs = new LogCapture();
  const logger = createLogger('warn', logs);
  const adapter = (embedder: MemoryEmbedderPort) => new PgVectorMemoryAdapter(db.pool, embedder, logger);

  beforeAll(async () => {
    server = wire ? await startWirePostgres() : undefined;
    db = await migratedDatabase(server?.url);
    consents = new PgConsentAdapter(db.pool);
  });
  afterAll(async () => {
    await db.close();
    await server?.stop();
  });

  it('recalls « sa fille Claire habite à Lyon » for « est-ce que ma fille passe ce week-end ? » (seed example)', async () => {
    const memory = adapter(seedExample());
    const senior = await createSenior(db);
    for (const [content, category] of [
      ['il aime le jardinage', 'profil'],
      [DAUGHTER, 'contacts'],
      ['elle prend son traitement le matin', 'sante'],
      ['son chat s’appelle Minou', 'profil'],
    ] as const) {
      await memory.persist({ seniorId: senior, content, category });
    }
    const found = await memory.search(QUESTION, senior, 5);
    expect(found[0]).toMatchObject({ content: DAUGHTER, category: 'contacts', seniorId: senior });
    expect(found).toHaveLength(4);
  });

  it('rejects a category outside the six canonical ones', async () => {
    const senior = await createSenior(db);
    await expect(adapter(seedExample()).persist({ seniorId: senior, content: 'x', category: 'religion' as FactCategory })).rejects.toThrow(InvalidFactCategoryError);
  });

  it('hides a revoked category at the next search, keeps the fact, and shows it again when re-granted (INV-C01)', async () => {
    const memory = adapter(seedExample());
    const senior = await createSenior(db);
    await memory.persist({ seniorId: senior, content: DAUGHTER, category: 'contacts' });
    await memory.persist({ seniorId: senior, content: 'elle prend son traitement le matin', category: 'sante' });
    await consents.revoke(senior, 'sante');
    expect((await memory.search(QUESTION, senior, 5)).map((f) => f.category)).toEqual(['contacts']);
    const kept = await db.pool.query('SELECT count(*)::int AS n FROM memory_facts WHERE senior_id = $1', [senior]);
    expect(kept.rows[0].n).toBe(2);
    await consents.grant(senior, 'sante');
    expect((await memory.search(QUESTION, senior, 5)).map((f) => f.category).sort()).toEqual(['contacts', 'sante']);
  });

  it('never returns another senior’s facts (INV-P05)', async () => {
    const memory = adapter(seedExample());
    const a = await createSenior(db);
    const b = await createSenior(db);
    await memory.persist({ seniorId: a, content: DAUGHTER, category: 'contacts' });
    expect(await memory.search(QUESTION, b, 5)).toEqual([]);
  });

  it('never compares vectors of two embedding models', async () => {
    const senior = await createSenior(db);
    await adapter(seedExample()).persist({ seniorId: senior, content: DAUGHTER, category: 'contacts' });
    expect(await adapter(new LocalHashEmbedder()).search(QUESTION, senior, 5)).toEqual([]);
  });

  it('falls back to chronological order, consent-filtered, with one warn log, on a degenerate query vector', async () => {
    const memory = adapter(new NoopMemoryEmbedder());
    const senior = await createSenior(db, ['contacts', 'profil']);
    await memory.persist({ seniorId: senior, content: 'premier', category: 'profil' });
    await memory.persist({ seniorId: senior, content: 'caché', category: 'sante' });
    await memory.persist({ seniorId: senior, content: 'second', category: 'contacts' });
    const before = logs.lines.length;
    expect((await memory.search('peu importe', senior, 5)).map((f) => f.content)).toEqual(['second', 'premier']);
    const warns = logs.lines.slice(before);
    expect(warns).toHaveLength(1);
    expect(warns[0]).toContain('isDegenerateVector');
  });

  it('falls back the same way when the embedder fails', async () => {
    const senior = await createSenior(db);
    await adapter(new NoopMemoryEmbedder()).persist({ seniorId: senior, content: 'un fait', category: 'profil' });
    const failing: MemoryEmbedderPort = { modelId: 'noop-zero', embed: async () => Promise.reject(new Error('embedder down')) };
    const before = logs.lines.length;
    expect((await adapter(failing).search('question', senior, 5)).map((f) => f.content)).toEqual(['un fait']);
    expect(logs.lines.slice(before).join('')).toContain('embedder failed');
  });

  it('deleteSenior removes every fact of the senior, counts them, and is idempotent', async () => {
    const memory = adapter(seedExample());
    const senior = await createSenior(db);
    const other = await createSenior(db);
    await memory.persist({ seniorId: senior, content: DAUGHTER, category: 'contacts' });
    await memory.persist({ seniorId: senior, content: 'il aime le jardinage', category: 'profil' });
    await memory.persist({ seniorId: other, content: 'il aime le jardinage', category: 'profil' });
    expect(await memory.deleteSenior(senior)).toBe(2);
    expect(await memory.deleteSenior(senior)).toBe(0);
    expect(await memory.search('il aime le jardinage', other, 5)).toHaveLength(1);
  });
});

describe('top-k of one senior among many (HNSW with a filter)', () => {
  let db: Awaited<ReturnType<typeof migratedDatabase>>;
  const MODEL = 'random-unit-v1';
  let target: string;
  let query: number[];
  let exactTop5: string[];
  const embedder: MemoryEmbedderPort = { modelId: MODEL, embed: async () => [query] };
  /**
   * 20 facts each: the target's are 2 % of the rows, so the 40 candidates of a naive scan (hnsw.ef_search)
   * hold about one of them. Building the index is most of the file's time (1,020 rows of 1,024 dimensions).
   */
  const SENIORS = 51;

  beforeAll(async () => {
    db = await migratedDatabase();
    const seniors = [];
    for (let i = 0; i < SENIORS; i++) seniors.push(await createSenior(db));
    target = seniors[0]!;
    const vectors = randomUnitVectors(SENIORS * 20 + 1, 42);
    query = vectors.pop()!;
    const categories: FactCategory[] = ['profil', 'contacts', 'sante', 'localisation', 'vision', 'biometrie'];
    const rows = seniors.flatMap((seniorId, s) =>
      Array.from({ length: 20 }, (_, i) => ({ seniorId, fact: `fait ${s}-${i}`, category: categories[i % 6]!, embedding: vectors[s * 20 + i]! })),
    );
    await bulkLoadFacts(db, rows, MODEL);
    exactTop5 = rows
      .filter((r) => r.seniorId === target)
      .sort((a, b) => cosineDistance(a.embedding, query) - cosineDistance(b.embedding, query))
      .slice(0, 5)
      .map((r) => r.fact);
  }, 120_000);
  afterAll(() => db.close());

  /** Runs the adapter's HNSW query with the btrees on senior_id gone and sequential scans off: the planner must use HNSW. */
  async function forcedHnsw(iterative: 'off' | 'strict_order'): Promise<string[]> {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('DROP INDEX memory_facts_senior_idx, memory_facts_valid_senior_idx, memory_facts_valid_content_idx');
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query(`SET LOCAL hnsw.iterative_scan = ${iterative}`);
      if (iterative !== 'off') await client.query('SET LOCAL hnsw.ef_search = 200');
      const plan = await client.query(`EXPLAIN ${INDEXED_SEARCH_SQL}`, [target, MODEL, `[${query.join(',')}]`, 5]);
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('memory_facts_embedding_hnsw');
      const res = await client.query(INDEXED_SEARCH_SQL, [target, MODEL, `[${query.join(',')}]`, 5]);
      return res.rows.map((r) => r.fact);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  it('a naive filtered HNSW scan misses: the data set defeats it', async () => {
    const naive = await forcedHnsw('off');
    expect(naive.length).toBeLessThan(5);
  });

  it('the adapter returns the exact top 5 of the senior (recall@5 = 1.0)', async () => {
    const found = await new PgVectorMemoryAdapter(db.pool, embedder, createLogger('silent')).search('q', target, 5);
    expect(found.map((f) => f.content)).toEqual(exactTop5);
  });

  it('its large-senior path (HNSW, iterative scan) returns the exact top 5 too', async () => {
    expect(await forcedHnsw('strict_order')).toEqual(exactTop5);
    const viaAdapter = await new PgVectorMemoryAdapter(db.pool, embedder, createLogger('silent'), { exactScanLimit: 0 }).search('q', target, 5);
    expect(viaAdapter.map((f) => f.content)).toEqual(exactTop5);
  });
});

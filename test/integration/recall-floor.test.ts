import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { NoopMemoryEmbedder } from '../../adapters/embedders/noop-memory-embedder.ts';
import { MemorySearch } from '../../adapters/memory/memory-search.ts';
import { PgVectorMemoryAdapter, type PgVectorMemoryOptions } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { readRecallFloors } from '../../adapters/memory/recall-floor.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createSenior, migratedDatabase } from '../support/database.ts';
import { RECALL_FACTS, UNRELATED_TURNS } from '../support/recall-facts.ts';
import { LogCapture } from '../support/runtime.ts';

/** The floor the runtime applies with its offline embedder: the shipped calibration's. */
const FLOOR = readRecallFloors()[new LocalHashEmbedder().modelId]!.floor;

const FACTS = RECALL_FACTS;

describe('recall’s relevance floor on real PGlite with pgvector (local embedder, shipped floor)', () => {
  let db: Awaited<ReturnType<typeof migratedDatabase>>;
  let senior: string;
  const logs = new LogCapture();
  const logger = createLogger('warn', logs);
  const adapter = (options: PgVectorMemoryOptions = { minSimilarity: FLOOR }, embedder: MemoryEmbedderPort = new LocalHashEmbedder()) =>
    new PgVectorMemoryAdapter(db.pool, embedder, logger, options);

  beforeAll(async () => {
    db = await migratedDatabase();
    senior = await createSenior(db);
    for (const [content, category] of FACTS) await adapter().persist({ seniorId: senior, content, category });
  });
  afterAll(async () => {
    await db.close();
  });

  it('the shipped floor is a real one: between 0 and 1', () => {
    expect(FLOOR).toBeGreaterThan(0);
    expect(FLOOR).toBeLessThan(1);
  });

  it('an unrelated question gets no facts; without the floor it got five', async () => {
    for (const question of UNRELATED_TURNS) {
      expect(await adapter().search(question, senior, 5), question).toEqual([]);
      expect(await adapter({ minSimilarity: null }).search(question, senior, 5)).toHaveLength(5);
    }
  });

  it('a related question gets the fact that answers it', async () => {
    expect((await adapter().search('Où sont mes lunettes ?', senior, 5)).map((f) => f.content)).toEqual([FACTS[4]![0]]);
    const cat = await adapter().search('Caramel a faim', senior, 5);
    expect(cat[0]).toMatchObject({ content: FACTS[1]![0], category: 'profil', seniorId: senior });
    expect(cat.length).toBeLessThan(5);
  });

  it('the HNSW path (a senior past the exact-scan limit) applies the same floor', async () => {
    const hnsw = (minSimilarity: number | null) => adapter({ exactScanLimit: 0, minSimilarity });
    expect(await hnsw(FLOOR).search('Quel temps fera-t-il demain ?', senior, 5)).toEqual([]);
    expect((await hnsw(FLOOR).search('Où sont mes lunettes ?', senior, 5)).map((f) => f.content)).toEqual([FACTS[4]![0]]);
    expect(await hnsw(null).search('Quel temps fera-t-il demain ?', senior, 5)).toHaveLength(5);
  });

  it('keeps exactly what a WHERE on the similarity keeps, in the same order', async () => {
    const question = 'Je suis allée à la chorale avec ma fille';
    const [vector] = await new LocalHashEmbedder().embed([question]);
    const where = await db.pool.query<{ fact: string }>(
      `SELECT fact FROM memory_facts WHERE senior_id = $1 AND 1 - (embedding <=> $2::vector) >= $3 ORDER BY embedding <=> $2::vector LIMIT 5`,
      [senior, `[${vector!.join(',')}]`, FLOOR],
    );
    const kept = (await adapter().search(question, senior, 5)).map((f) => f.content);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(where.rows.map((r) => r.fact));
  });

  it('a degenerate query vector still falls back to the most recent facts, floor or not', async () => {
    const noop = new NoopMemoryEmbedder();
    const other = await createSenior(db);
    const memory = adapter({ minSimilarity: 0.99 }, noop);
    await memory.persist({ seniorId: other, content: 'premier', category: 'profil' });
    await memory.persist({ seniorId: other, content: 'second', category: 'contacts' });
    const before = logs.lines.length;
    expect((await memory.search('peu importe', other, 5)).map((f) => f.content)).toEqual(['second', 'premier']);
    expect(logs.lines.slice(before).join('')).toContain('isDegenerateVector');
  });

  it('a failed embedding falls back the same way', async () => {
    const failing: MemoryEmbedderPort = { modelId: new LocalHashEmbedder().modelId, embed: async () => Promise.reject(new Error('embedder down')) };
    const recent = await adapter({ minSimilarity: FLOOR }, failing).search('Quel temps fera-t-il demain ?', senior, 5);
    expect(recent.map((f) => f.content)).toEqual(FACTS.slice(1).reverse().map(([content]) => content));
  });

  it('the agent’s search_memory tool gets the floored facts too', async () => {
    const search = new MemorySearch(db.pool, new PgConsentAdapter(db.pool), adapter(), new LocalHashEmbedder());
    expect((await search.searchMemory(senior, 'Quel temps fera-t-il demain ?')).facts).toEqual([]);
    expect((await search.searchMemory(senior, 'Où sont mes lunettes ?')).facts).toEqual([FACTS[4]![0]]);
  });
});

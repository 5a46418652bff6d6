import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { PgVectorMemoryAdapter } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { createLogger } from '../../runtime/logger.ts';
import { reembedFacts } from '../../runtime/jobs/reembed.ts';
import { createSenior, migratedDatabase } from '../support/database.ts';
import { topicEmbedder } from '../support/embeddings.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

describe('memory:reembed', () => {
  it('moves every fact to the new model, so the new model’s searches find them again; a second run has nothing to do', async () => {
    const logger = createLogger('silent');
    const before = new PgVectorMemoryAdapter(db.pool, topicEmbedder({}), logger);
    const after = new PgVectorMemoryAdapter(db.pool, new LocalHashEmbedder(), logger);
    const senior = await createSenior(db);
    const facts = ['sa fille Claire habite à Lyon', 'il aime le jardinage', 'son chat s’appelle Minou'];
    for (const content of facts) await before.persist({ seniorId: senior, content, category: 'profil' });
    expect(await after.search('jardinage', senior, 5)).toEqual([]);

    const report = await reembedFacts(new PgMemoryFactsRepository(db.pool), new LocalHashEmbedder(), 2);
    expect(report).toEqual({ reembedded: 3, from: { 'test-topics': 3 }, to: 'kohami-local-hash-v1' });
    const found = await after.search('il aime le jardinage', senior, 5);
    expect(found.map((f) => f.content)).toHaveLength(3);
    expect(found[0]!.content).toBe('il aime le jardinage');
    expect((await reembedFacts(new PgMemoryFactsRepository(db.pool), new LocalHashEmbedder())).reembedded).toBe(0);
  });
});

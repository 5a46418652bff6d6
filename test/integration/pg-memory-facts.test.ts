import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { bulkLoadFacts, createSenior, migratedDatabase } from '../support/database.ts';
import { randomUnitVectors } from '../support/embeddings.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

describe('PgMemoryFactsRepository.latest', () => {
  it('the senior’s newest facts first, insertion order breaking ties, of one category if asked, whatever model embedded them', async () => {
    const [senior, other] = [await createSenior(db), await createSenior(db)];
    const [v] = randomUnitVectors(1, 1);
    const fact = (seniorId: string, text: string, category: string) => ({ seniorId, fact: text, category, embedding: v! });
    // One statement each: the rows of one share their created_at.
    await bulkLoadFacts(db, [fact(senior, 'il aime le jardinage', 'profil'), fact(senior, 'sa fille Claire', 'contacts')], 'model-a');
    await bulkLoadFacts(db, [fact(senior, 'son fils Paul', 'contacts'), fact(senior, 'il a un chat', 'profil'), fact(other, 'sa sœur Lucie', 'contacts')], 'model-b');
    const facts = new PgMemoryFactsRepository(db.pool);

    expect(await facts.latest(senior, 10)).toEqual(['il a un chat', 'son fils Paul', 'sa fille Claire', 'il aime le jardinage']);
    expect(await facts.latest(senior, 2)).toEqual(['il a un chat', 'son fils Paul']);
    expect(await facts.latest(senior, 10, 'contacts')).toEqual(['son fils Paul', 'sa fille Claire']);
    expect(await facts.latest(senior, 10, 'sante')).toEqual([]);
  });
});

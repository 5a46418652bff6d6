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

  it('reads no fact of a category whose consent is revoked or was never given (INV-C01): neither the dream nor the recognizer sees it', async () => {
    const senior = await createSenior(db, ['profil']);
    const [v] = randomUnitVectors(1, 2);
    await bulkLoadFacts(db, [{ seniorId: senior, fact: 'il aime le jardinage', category: 'profil', embedding: v! }, { seniorId: senior, fact: 'sa fille Claire', category: 'contacts', embedding: v! }], 'model-a');
    const facts = new PgMemoryFactsRepository(db.pool);
    expect(await facts.latest(senior, 10)).toEqual(['il aime le jardinage']);
    expect(await facts.latest(senior, 10, 'contacts')).toEqual([]);
    await db.pool.query("UPDATE consents SET revoked_at = now() WHERE senior_id = $1 AND category = 'profil'", [senior]);
    expect(await facts.latest(senior, 10)).toEqual([]);
  });
});

import pgvector from 'pgvector';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { openDatabase, type Database } from '../../runtime/db/database.ts';
import { migrate } from '../../adapters/postgres/migrations.ts';
import { testDatabaseImage } from './database-image.ts';

/**
 * A migrated throwaway database: in-process PGlite started from the test run's migrated image, or a
 * Postgres URL (the wire path), migrated here.
 */
export async function migratedDatabase(databaseUrl?: string): Promise<Database & { directory: SeniorDirectory }> {
  const db = await openDatabase({ databaseUrl, pgliteDataDir: 'memory://', pgliteImage: databaseUrl ? undefined : testDatabaseImage() });
  await migrate(db.pool);
  return Object.assign(db, { directory: new SeniorDirectory(db.pool) });
}

/** Many seniors with every consent, in two statements. */
export async function createSeniors(db: Database, count: number): Promise<string[]> {
  const res = await db.pool.query<{ id: string }>(
    `INSERT INTO seniors (display_name, onboarding_done) SELECT 'senior ' || i, true FROM generate_series(1, $1::int) i RETURNING id`,
    [count],
  );
  const ids = res.rows.map((r) => r.id);
  await db.pool.query('INSERT INTO consents (senior_id, category) SELECT s, c FROM unnest($1::uuid[]) s, unnest($2::text[]) c', [ids, [...CONSENT_CATEGORIES]]);
  return ids;
}

/** A senior with the given consents (all by default). */
export async function createSenior(db: Database & { directory: SeniorDirectory }, consents: readonly string[] = CONSENT_CATEGORIES): Promise<string> {
  const id = await db.directory.createSenior({ displayName: 'Test', preferredName: 'Jeanne', onboardingDone: true });
  for (const category of consents) await db.pool.query('INSERT INTO consents (senior_id, category) VALUES ($1, $2)', [id, category]);
  return id;
}

/**
 * Bulk load facts in one statement with the HNSW index dropped, then rebuild it:
 * inserting 1024-d rows under the index costs ~20 ms a row on PGlite.
 */
export async function bulkLoadFacts(db: Database, rows: Array<{ seniorId: string; fact: string; category: string; embedding: number[] }>, model: string) {
  await db.pool.query('DROP INDEX IF EXISTS memory_facts_embedding_hnsw');
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    await db.pool.query(
      `INSERT INTO memory_facts (senior_id, fact, category, embedding, embedding_model)
       SELECT s, f, c, e::vector, $5 FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(s, f, c, e)`,
      [chunk.map((r) => r.seniorId), chunk.map((r) => r.fact), chunk.map((r) => r.category), chunk.map((r) => pgvector.toSql(r.embedding)), model],
    );
  }
  await db.pool.query('CREATE INDEX memory_facts_embedding_hnsw ON memory_facts USING hnsw (embedding vector_cosine_ops)');
}

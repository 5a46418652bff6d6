import { cp, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgVectorMemoryAdapter } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { migrate, MIGRATIONS_DIR } from '../../adapters/postgres/migrations.ts';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { openDatabase, type Database } from '../../runtime/db/database.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createSenior } from '../support/database.ts';
import { unit } from '../support/embeddings.ts';
import { startWirePostgres } from '../support/pglite-server.ts';

const logger = createLogger('silent');

/** Two paraphrases within 0.05 of each other (the uncalibrated default distance); anything else on its own axis. */
const PARAPHRASES: Record<string, number[]> = {
  'Elle aime les fraises du marché.': unit({ 3: 1 }),
  'Elle adore les fraises du marché.': unit({ 3: 1, 4: 0.1 }),
};
const embedder: MemoryEmbedderPort = {
  modelId: 'test-near',
  embed: async (texts) => texts.map((t) => PARAPHRASES[t] ?? unit({ 900: 1 })),
};

describe('two runtime processes closing sessions of one senior at once', () => {
  let wire: Awaited<ReturnType<typeof startWirePostgres>>;
  let one: Database;
  let two: Database;

  beforeAll(async () => {
    wire = await startWirePostgres();
    // Two pools on one database, as two processes sharing DATABASE_URL have.
    one = await openDatabase({ databaseUrl: wire.url, pgliteDataDir: 'unused' });
    two = await openDatabase({ databaseUrl: wire.url, pgliteDataDir: 'unused' });
    await migrate(one.pool);
    // Each pool's connections open before the race, so the writers' statements interleave (not their connection set-ups).
    for (const db of [one, two]) await Promise.all(Array.from({ length: 5 }, () => db.pool.query('SELECT pg_sleep(0.01)')));
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await wire.stop();
  });

  const count = async (senior: string) => (await one.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_facts WHERE senior_id = $1 AND invalid_at IS NULL', [senior])).rows[0]!.n;

  it('never both store the same fact: the same text, or two paraphrases of it', async () => {
    const senior = await createSenior(Object.assign(one, { directory: new SeniorDirectory(one.pool) }));
    const adapters = [new PgVectorMemoryAdapter(one.pool, embedder, logger), new PgVectorMemoryAdapter(two.pool, embedder, logger)];
    const [a, b] = Object.keys(PARAPHRASES) as [string, string];
    // Each process closes 5 sessions at once, each extracting the fact: 10 writers racing on the same data.
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => adapters[i % 2]!.persist({ seniorId: senior, content: i % 4 < 2 ? a : b, category: 'profil' })));
    expect(await count(senior)).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
  });

  it('the unique index refuses a second valid copy even from a writer that skips the lock', async () => {
    const senior = await createSenior(Object.assign(one, { directory: new SeniorDirectory(one.pool) }));
    const insert = (pool: Database['pool'], text: string) =>
      pool.query(`INSERT INTO memory_facts (senior_id, fact, category, embedding, embedding_model) VALUES ($1, $2, 'profil', $3::vector, 'x')`, [senior, text, `[${unit({ 1: 1 }).join(',')}]`]);
    await insert(one.pool, 'Il aime le jardinage.');
    await expect(insert(two.pool, 'il aime le  jardinage')).rejects.toThrow(/memory_facts_valid_content_idx/);
    // An invalidated fact does not count: the same text may hold again.
    await one.pool.query('UPDATE memory_facts SET invalid_at = now() WHERE senior_id = $1', [senior]);
    await insert(two.pool, 'il aime le jardinage');
    expect(await count(senior)).toBe(1);
  });
});

describe('migration 011 on a database that already holds copies', () => {
  let db: Database;

  beforeAll(async () => {
    const before = await mkdtemp(path.join(tmpdir(), 'kohami-migrations-010-'));
    for (const file of await readdir(MIGRATIONS_DIR)) if (file < '011') await cp(path.join(MIGRATIONS_DIR, file), path.join(before, file));
    db = await openDatabase({ pgliteDataDir: 'memory://' });
    await migrate(db.pool, before);
  });
  afterAll(() => db.close());

  it('keeps the oldest of each senior’s identical facts, and only those', async () => {
    const directory = new SeniorDirectory(db.pool);
    const [senior, other] = [await directory.createSenior({ displayName: 'A' }), await directory.createSenior({ displayName: 'B' })];
    const v = `[${unit({ 2: 1 }).join(',')}]`;
    const rows: Array<[string, string, string]> = [
      [senior, 'Sa fille Claire vit à Lyon.', '2026-01-01'],
      [senior, 'sa fille claire vit a lyon', '2026-02-01'],
      [senior, 'Sa fille Claire vit à Lyon.', '2026-03-01'],
      [senior, 'Il aime le jardinage.', '2026-01-15'],
      [other, 'Sa fille Claire vit à Lyon.', '2026-04-01'],
    ];
    for (const [s, fact, at] of rows) {
      await db.pool.query(`INSERT INTO memory_facts (senior_id, fact, category, embedding, embedding_model, created_at) VALUES ($1, $2, 'contacts', $3::vector, 'm', $4)`, [s, fact, v, at]);
    }
    // 011 applies on the copies (and the migrations after it with it).
    expect((await migrate(db.pool))[0]).toBe('011_fact_validity');
    const kept = await db.pool.query<{ senior_id: string; fact: string; at: string; invalid_at: Date | null }>(
      `SELECT senior_id, fact, to_char(created_at, 'YYYY-MM-DD') AS at, invalid_at FROM memory_facts ORDER BY senior_id = $1 DESC, created_at`,
      [senior],
    );
    expect(kept.rows).toEqual([
      { senior_id: senior, fact: 'Sa fille Claire vit à Lyon.', at: '2026-01-01', invalid_at: null },
      { senior_id: senior, fact: 'Il aime le jardinage.', at: '2026-01-15', invalid_at: null },
      { senior_id: other, fact: 'Sa fille Claire vit à Lyon.', at: '2026-04-01', invalid_at: null },
    ]);
    const indexes = await db.pool.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'memory_facts' AND indexdef LIKE '%invalid_at IS NULL%' ORDER BY 1`);
    expect(indexes.rows.map((r) => r.indexname)).toEqual(['memory_facts_valid_content_idx', 'memory_facts_valid_senior_idx']);
  });
});

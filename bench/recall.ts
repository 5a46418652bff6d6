import { PgVectorMemoryAdapter } from '../adapters/memory/pgvector-memory.adapter.ts';
import { FACT_CATEGORIES, type MemoryEmbedderPort } from '../machines/memory/memory.port.ts';
import { createLogger } from '../runtime/logger.ts';
import { bulkLoadFacts, createSeniors, migratedDatabase } from '../test/support/database.ts';
import { randomUnitVectors } from '../test/support/embeddings.ts';
import { percentile } from './support/stats.ts';

/**
 * bench:recall — search latency for one senior among N facts of 500 seniors on embedded
 * PGlite (embedding time excluded: the query vector is precomputed), for the adapter's
 * two paths, without and with recall's relevance floor, and a plain exact scan (no index)
 * in the same run, with recall@5 against the exact answer (for the floored rows: the plain
 * scan with the floor as a WHERE).   npm run bench:recall [-- N1 N2 …]   (default 5000 20000)
 */
const SIZES = process.argv.slice(2).map(Number).filter(Boolean);
const FACT_COUNTS = SIZES.length > 0 ? SIZES : [5000, 20000];
const SENIORS = 500;
const QUERIES = 300;
const MODEL = 'bench-random-v1';
/**
 * Random 1024-d unit vectors are nearly orthogonal (similarity ~ N(0, 0.031)): a calibrated floor
 * would keep nothing. This one keeps part of each top 5, so the floored rows measure a filter
 * that has work to do; its cost does not depend on its value (the same top 5 is ranked).
 */
const FLOOR = 0.05;

const fmt = (x: number, d = 2) => x.toFixed(d);

const PLAIN_EXACT_SQL = `SELECT mf.fact FROM memory_facts mf
  JOIN consents c ON c.senior_id = mf.senior_id AND c.category = mf.category AND c.revoked_at IS NULL
 WHERE mf.senior_id = $1::uuid AND mf.embedding_model = $2 ORDER BY mf.embedding <=> $3::vector LIMIT 5`;
/** The floored rows' ground truth: the floor as a WHERE on the similarity. */
const PLAIN_FLOORED_SQL = PLAIN_EXACT_SQL.replace(' ORDER BY', ' AND 1 - (mf.embedding <=> $3::vector) >= $4 ORDER BY');

const rows: string[] = [];
for (const facts of FACT_COUNTS) {
  const db = await migratedDatabase();
  const seniors = await createSeniors(db, SENIORS);
  const vectors = randomUnitVectors(facts + QUERIES, facts);
  const queries = vectors.splice(facts, QUERIES);
  const data = vectors.map((embedding, i) => ({ seniorId: seniors[i % SENIORS]!, fact: `fait ${i}`, category: FACT_CATEGORIES[i % 6]!, embedding }));
  const t0 = performance.now();
  await bulkLoadFacts(db, data, MODEL);
  const loadSeconds = (performance.now() - t0) / 1000;

  let current: number[] = [];
  const embedder: MemoryEmbedderPort = { modelId: MODEL, embed: async () => [current] };
  const logger = createLogger('silent');
  const exactPath = new PgVectorMemoryAdapter(db.pool, embedder, logger);
  const hnswPath = new PgVectorMemoryAdapter(db.pool, embedder, logger, { exactScanLimit: 0 });
  const exactFloored = new PgVectorMemoryAdapter(db.pool, embedder, logger, { minSimilarity: FLOOR });
  const hnswFloored = new PgVectorMemoryAdapter(db.pool, embedder, logger, { exactScanLimit: 0, minSimilarity: FLOOR });

  // Ground truth and baseline: the same ranking with every index off (a plain exact scan).
  const plain = async (senior: string, q: number[], floor: number | null = null) => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_indexscan = off');
      await client.query('SET LOCAL enable_bitmapscan = off');
      const vector = `[${q.join(',')}]`;
      const res = await client.query<{ fact: string }>(floor === null ? PLAIN_EXACT_SQL : PLAIN_FLOORED_SQL, floor === null ? [senior, MODEL, vector] : [senior, MODEL, vector, floor]);
      await client.query('COMMIT');
      return res.rows.map((r) => r.fact);
    } finally {
      client.release();
    }
  };

  /** Recall@5 against the plain scan with the same floor; a search that rightly returns nothing scores 1. */
  const measure = async (search: (senior: string, q: number[]) => Promise<string[]>, floor: number | null = null) => {
    const latencies: number[] = [];
    let hits = 0;
    let kept = 0;
    for (let i = 0; i < QUERIES; i++) {
      const senior = seniors[(i * 7) % SENIORS]!;
      current = queries[i]!;
      const truth = await plain(senior, current, floor);
      const t = performance.now();
      const found = await search(senior, current);
      latencies.push(performance.now() - t);
      kept += found.length;
      hits += truth.length === 0 ? Number(found.length === 0) : found.filter((f) => truth.includes(f)).length / truth.length;
    }
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), recall: hits / QUERIES, kept: kept / QUERIES };
  };

  const base = await measure((s, q) => plain(s, q));
  const exact = await measure(async (s) => (await exactPath.search('q', s, 5)).map((f) => f.content));
  const exactFloor = await measure(async (s) => (await exactFloored.search('q', s, 5)).map((f) => f.content), FLOOR);
  const hnsw = await measure(async (s) => (await hnswPath.search('q', s, 5)).map((f) => f.content));
  const hnswFloor = await measure(async (s) => (await hnswFloored.search('q', s, 5)).map((f) => f.content), FLOOR);
  for (const [name, r] of [
    ['plain exact scan (no index)', base],
    ['adapter: exact partition (default)', exact],
    [`adapter: exact partition + floor ${FLOOR}`, exactFloor],
    ['adapter: HNSW iterative scan', hnsw],
    [`adapter: HNSW iterative scan + floor ${FLOOR}`, hnswFloor],
  ] as const) {
    rows.push(`| ${facts} | ${name} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(base.p50 / r.p50)}× | ${fmt(r.kept, 2)} | ${fmt(r.recall, 3)} |`);
  }
  rows.push(`| ${facts} | _bulk load + HNSW build_ | ${fmt(loadSeconds, 1)} s | | | | |`);
  await db.close();
}

console.log(`\nbench:recall — ${SENIORS} seniors, ${QUERIES} searches per row, top 5, embedded PGlite, node ${process.version}\n`);
console.log('| facts | search | p50 ms | p99 ms | speed-up vs plain scan (p50) | facts kept per search | recall@5 |');
console.log('|---:|---|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log('\ntargets: p99 ≤ 5 ms at 20,000 facts, recall@5 = 1.0');

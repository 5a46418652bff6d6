import { PgVectorMemoryAdapter } from '../adapters/memory/pgvector-memory.adapter.ts';
import { FACT_CATEGORIES, type MemoryEmbedderPort } from '../machines/memory/memory.port.ts';
import { createLogger } from '../runtime/logger.ts';
import { bulkLoadFacts, createSeniors, migratedDatabase } from '../test/support/database.ts';
import { randomUnitVectors } from '../test/support/embeddings.ts';
import { percentile } from './support/stats.ts';

/**
 * bench:recall — search latency for one senior among N facts of 500 seniors on embedded
 * PGlite (embedding time excluded: the query vector is precomputed), for the adapter's
 * two paths and a plain exact scan (no index) in the same run, with recall@5 against
 * the exact answer.   npm run bench:recall [-- N1 N2 …]   (default 5000 20000)
 */
const SIZES = process.argv.slice(2).map(Number).filter(Boolean);
const FACT_COUNTS = SIZES.length > 0 ? SIZES : [5000, 20000];
const SENIORS = 500;
const QUERIES = 300;
const MODEL = 'bench-random-v1';

const fmt = (x: number, d = 2) => x.toFixed(d);

const PLAIN_EXACT_SQL = `SELECT mf.fact FROM memory_facts mf
  JOIN consents c ON c.senior_id = mf.senior_id AND c.category = mf.category AND c.revoked_at IS NULL
 WHERE mf.senior_id = $1::uuid AND mf.embedding_model = $2 ORDER BY mf.embedding <=> $3::vector LIMIT 5`;

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

  // Ground truth and baseline: the same ranking with every index off (a plain exact scan).
  const plain = async (senior: string, q: number[]) => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_indexscan = off');
      await client.query('SET LOCAL enable_bitmapscan = off');
      const res = await client.query<{ fact: string }>(PLAIN_EXACT_SQL, [senior, MODEL, `[${q.join(',')}]`]);
      await client.query('COMMIT');
      return res.rows.map((r) => r.fact);
    } finally {
      client.release();
    }
  };

  const measure = async (search: (senior: string, q: number[]) => Promise<string[]>) => {
    const latencies: number[] = [];
    let hits = 0;
    for (let i = 0; i < QUERIES; i++) {
      const senior = seniors[(i * 7) % SENIORS]!;
      current = queries[i]!;
      const truth = await plain(senior, current);
      const t = performance.now();
      const found = await search(senior, current);
      latencies.push(performance.now() - t);
      hits += found.filter((f) => truth.includes(f)).length / Math.max(1, truth.length);
    }
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), recall: hits / QUERIES };
  };

  const base = await measure(plain);
  const exact = await measure(async (s) => (await exactPath.search('q', s, 5)).map((f) => f.content));
  const hnsw = await measure(async (s) => (await hnswPath.search('q', s, 5)).map((f) => f.content));
  for (const [name, r] of [
    ['plain exact scan (no index)', base],
    ['adapter: exact partition (default)', exact],
    ['adapter: HNSW iterative scan', hnsw],
  ] as const) {
    rows.push(`| ${facts} | ${name} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(base.p50 / r.p50)}× | ${fmt(r.recall, 3)} |`);
  }
  rows.push(`| ${facts} | _bulk load + HNSW build_ | ${fmt(loadSeconds, 1)} s | | | |`);
  await db.close();
}

console.log(`\nbench:recall — ${SENIORS} seniors, ${QUERIES} searches per row, top 5, embedded PGlite, node ${process.version}\n`);
console.log('| facts | search | p50 ms | p99 ms | speed-up vs plain scan (p50) | recall@5 |');
console.log('|---:|---|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log('\ntargets: p99 ≤ 5 ms at 20,000 facts, recall@5 = 1.0');

import { INDEXED_SEARCH_SQL, PgVectorMemoryAdapter, vectorParam } from '../adapters/memory/pgvector-memory.adapter.ts';
import { FACT_CATEGORIES, type MemoryEmbedderPort } from '../machines/memory/memory.port.ts';
import { createLogger } from '../runtime/logger.ts';
import { bulkLoadFacts, createSeniors, migratedDatabase } from '../test/support/database.ts';
import { randomUnitVectors } from '../test/support/embeddings.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

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
/** The design the adapter does not use, measured: the floor as a WHERE under the HNSW iterative scan. */
const HNSW_WHERE_SQL = INDEXED_SEARCH_SQL.replace(' ORDER BY', ' AND 1 - (mf.embedding <=> $3::vector) >= $5 ORDER BY');

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

  /** The adapter's HNSW transaction with the floor in the WHERE instead. */
  const hnswWhere = async (senior: string, q: number[]) => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL hnsw.iterative_scan = strict_order');
      await client.query('SET LOCAL hnsw.ef_search = 200');
      const res = await client.query<{ fact: string }>(HNSW_WHERE_SQL, [senior, MODEL, vectorParam(q), 5, FLOOR]);
      await client.query('COMMIT');
      return res.rows.map((r) => r.fact);
    } finally {
      client.release();
    }
  };

  const contents = (found: Array<{ content: string }>) => found.map((f) => f.content);
  const variants: Array<{ name: string; floor: number | null; search: (senior: string, q: number[]) => Promise<string[]> }> = [
    { name: 'plain exact scan (no index)', floor: null, search: (s, q) => plain(s, q) },
    { name: 'adapter: exact partition (default)', floor: null, search: async (s) => contents(await exactPath.search('q', s, 5)) },
    { name: `adapter: exact partition + floor ${FLOOR}`, floor: FLOOR, search: async (s) => contents(await exactFloored.search('q', s, 5)) },
    { name: 'adapter: HNSW iterative scan', floor: null, search: async (s) => contents(await hnswPath.search('q', s, 5)) },
    { name: `adapter: HNSW iterative scan + floor ${FLOOR}`, floor: FLOOR, search: async (s) => contents(await hnswFloored.search('q', s, 5)) },
    { name: `not used: HNSW iterative scan, floor ${FLOOR} as a WHERE`, floor: FLOOR, search: hnswWhere },
  ];
  // Interleaved: each query runs every variant in turn (the order rotating), so drift on a shared
  // machine weighs on all of them alike and the ratios compare like with like.
  const measured = variants.map(() => ({ latencies: [] as number[], hits: 0, kept: 0 }));
  for (let i = 0; i < QUERIES; i++) {
    const senior = seniors[(i * 7) % SENIORS]!;
    current = queries[i]!;
    const truth = { none: await plain(senior, current), floored: await plain(senior, current, FLOOR) };
    for (let k = 0; k < variants.length; k++) {
      const v = (i + k) % variants.length;
      const t = performance.now();
      const found = await variants[v]!.search(senior, current);
      const m = measured[v]!;
      m.latencies.push(performance.now() - t);
      m.kept += found.length;
      // Recall@5 against the plain scan with the same floor; a search that rightly returns nothing scores 1.
      const expected = variants[v]!.floor === null ? truth.none : truth.floored;
      m.hits += expected.length === 0 ? Number(found.length === 0) : found.filter((f) => expected.includes(f)).length / expected.length;
    }
  }
  const basep50 = percentile(measured[0]!.latencies, 50);
  variants.forEach(({ name }, v) => {
    const m = measured[v]!;
    const p50 = percentile(m.latencies, 50);
    rows.push(`| ${facts} | ${name} | ${fmt(p50)} | ${fmt(percentile(m.latencies, 99))} | ${fmt(basep50 / p50)}× | ${fmt(m.kept / QUERIES, 2)} | ${fmt(m.hits / QUERIES, 3)} |`);
  });
  rows.push(`| ${facts} | _bulk load + HNSW build_ | ${fmt(loadSeconds, 1)} s | | | | |`);
  await db.close();
}

console.log(`\nbench:recall — ${SENIORS} seniors, ${QUERIES} searches per row, top 5, embedded PGlite, node ${process.version}\n`);
console.log('| facts | search | p50 ms | p99 ms | speed-up vs plain scan (p50) | facts kept per search | recall@5 |');
console.log('|---:|---|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log('\ntargets: p99 ≤ 5 ms at 20,000 facts, recall@5 = 1.0');

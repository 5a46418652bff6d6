import { SemanticCache } from '../adapters/semantic-cache/semantic-cache.ts';
import type { MemoryEmbedderPort } from '../machines/memory/memory.port.ts';
import { guardsAgree, questionGuard } from '../machines/cache/near-miss-guard.ts';
import { randomUnitVectors } from '../test/support/embeddings.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:semantic-cache — lookup cost with 1024-d vectors at 500, 2,000 and 10,000 cached entries
 * (every entry a candidate), in three blocks, each warmed and timed separately:
 * - miss: random unit vectors, no candidate above the threshold — the cache's scan (question guard,
 *   normalisation, SIMD matrix–vector product) against a naive loop computing a cosine per entry
 *   over number[] in the same run;
 * - hit: the query is a cached entry's vector and question — scan, then the near-miss guard (details
 *   and content words) on the candidate; the guard's own cost (the question's signature, computed
 *   once per lookup, and one comparison) is timed alone to give its share of the lookup;
 * - adversarial: every entry is above the threshold and the guard refuses each one (a different
 *   content word), so the guard runs on all candidates.
 * - strict (the default profile): the same n questions in a strict-only cache; a hit is entry k asked
 *   again after a hesitation (its key computed, one map look-up), a miss a question asked
 *   of no entry — against the similarity hit above in the same run.
 * The query embedding is precomputed (excluded).   npm run bench:semantic-cache
 */
const SIZES = [500, 2000, 10_000];
const LOOKUPS = 300;
const WARM_UP = 20;
const signal = new AbortController().signal;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (xs: number[]) => `${pct(xs, 50).toFixed(3)} / ${pct(xs, 99).toFixed(3)}`;

/** Questions a senior asks, varied in their content words so the guard has real work. */
const SUBJECTS = ['mes lunettes', 'mes clés', 'mon chapeau', 'la télécommande', 'mon téléphone', 'mon écharpe rouge', 'le journal', 'mon carnet'];
const VERBS = ['Où sont', 'Tu as vu', 'Tu sais où sont', 'Je cherche'];
const question = (i: number) => `${VERBS[i % VERBS.length]} ${SUBJECTS[Math.floor(i / VERBS.length) % SUBJECTS.length]} numéro ${i} ?`;

function naiveBest(entries: number[][], query: number[]): number {
  let best = -Infinity;
  for (const v of entries) {
    let dot = 0;
    let nv = 0;
    let nq = 0;
    for (let i = 0; i < v.length; i++) {
      dot += v[i]! * query[i]!;
      nv += v[i]! * v[i]!;
      nq += query[i]! * query[i]!;
    }
    best = Math.max(best, dot / (Math.sqrt(nv) * Math.sqrt(nq)));
  }
  return best;
}

/** A cache of `n` entries, entry i under `vectors[i]` and `questions(i)`. */
async function filled(n: number, vectors: number[][], questions: (i: number) => string) {
  let next: number[] = [];
  const embedder: MemoryEmbedderPort = { modelId: 'bench', embed: async () => [next] };
  const options = { strict: false, embedder, agentModelId: 'a', ttlMs: 3_600_000, maxPerSenior: n, maxEntries: n, budgetMs: 1000 };
  const cache = new SemanticCache({ ...options, threshold: 0.99, maxCandidates: n });
  const filler = new SemanticCache({ ...options, threshold: 0.99, maxCandidates: 1 });
  for (let i = 0; i < n; i++) {
    next = vectors[i]!;
    const miss = await filler.lookup({ seniorId: 's', question: questions(i), previous: null, promptVersion: 'p' }, signal);
    cache.store((miss as { ticket: unknown }).ticket, 'réponse');
  }
  const lookup = (vector: number[], q: string) => {
    next = vector;
    return cache.lookup({ seniorId: 's', question: q, previous: null, promptVersion: 'p' }, signal);
  };
  return lookup;
}

/** Times `run` LOOKUPS times after a warm-up. */
async function timed(run: (i: number) => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < WARM_UP + LOOKUPS; i++) {
    const t = performance.now();
    await run(i);
    if (i >= WARM_UP) out.push(performance.now() - t);
  }
  return out;
}

/** A strict-only cache (no embedder call, no vector) of `n` questions. */
async function strictFilled(n: number) {
  const embedder: MemoryEmbedderPort = { modelId: 'bench', embed: () => Promise.reject(new Error('strict never embeds')) };
  const cache = new SemanticCache({ strict: true, threshold: null, embedder, agentModelId: 'a', ttlMs: 3_600_000, maxPerSenior: n, maxEntries: n, maxCandidates: n, budgetMs: 1000 });
  const lookup = (q: string) => cache.lookup({ seniorId: 's', question: q, previous: null, promptVersion: 'p' }, signal);
  for (let i = 0; i < n; i++) cache.store(((await lookup(question(i))) as { ticket: unknown }).ticket, 'réponse');
  return lookup;
}

const missRows: string[] = [];
const hitRows: string[] = [];
const strictRows: string[] = [];
for (const n of SIZES) {
  const vectors = randomUnitVectors(n + LOOKUPS + WARM_UP, n);
  const queries = vectors.splice(n, LOOKUPS + WARM_UP);

  // Random unit vectors are never above 0.99 of each other: every lookup scans all n and misses.
  const missLookup = await filled(n, vectors, question);
  const miss = await timed((i) => missLookup(queries[i]!, question(i)));
  const naive = await timed((i) => naiveBest(vectors, queries[i]!));
  missRows.push(`| ${n} | ${ms(miss)} | ${ms(naive)} | **${(pct(naive, 50) / pct(miss, 50)).toFixed(1)}×** |`);

  // Entry k asked again: one candidate above the threshold, which the guard lets through.
  const hitLookup = await filled(n, vectors, question);
  const hit = await timed(async (i) => {
    const k = (i * 7919) % n;
    const result = await hitLookup(vectors[k]!, question(k));
    if (result.kind !== 'hit') throw new Error('bench: expected a hit');
  });
  const stored = Array.from({ length: SUBJECTS.length * VERBS.length }, (_, i) => questionGuard(question(i)));
  const guard = await timed((i) => guardsAgree(stored[i % stored.length]!, questionGuard(question(i % stored.length))));

  // Every entry the same vector as the query, each refused by the guard: the guard's worst case.
  const same = Array.from({ length: n }, () => vectors[0]!);
  const adversarialLookup = await filled(n, same, (i) => `Où est le carnet numéro ${i} ?`);
  const adversarial = await timed(async () => {
    const result = await adversarialLookup(vectors[0]!, 'Où est le chapeau numéro 1 ?');
    if (result.kind !== 'miss') throw new Error('bench: expected the guard to refuse');
  });
  hitRows.push(`| ${n} | ${ms(hit)} | ${ms(guard)} | ${((100 * pct(guard, 50)) / pct(hit, 50)).toFixed(0)} % | ${ms(adversarial)} |`);

  const strictLookup = await strictFilled(n);
  const strictHit = await timed(async (i) => {
    const result = await strictLookup(`Euh, ${question((i * 7919) % n)}`);
    if (result.kind !== 'hit') throw new Error('bench: expected a strict hit');
  });
  const strictMiss = await timed(async (i) => {
    const result = await strictLookup(`Où est passé le numéro ${n + i} ?`);
    if (result.kind !== 'miss') throw new Error('bench: expected a strict miss');
  });
  strictRows.push(`| ${n} | ${ms(strictHit)} | ${ms(strictMiss)} | **${(pct(hit, 50) / pct(strictHit, 50)).toFixed(1)}×** |`);
}
console.log(`\nbench:semantic-cache — 1024-d, ${LOOKUPS} lookups per size and block, every entry a candidate, node ${process.version}\n`);
console.log('| entries | cache lookup (miss) p50 / p99 ms | naive number[] loop p50 / p99 ms | speed-up (p50) |');
console.log('|---:|---:|---:|---:|');
for (const row of missRows) console.log(row);
console.log('\n| entries | hit p50 / p99 ms | guard alone p50 / p99 ms | guard share of a hit (p50) | every candidate refused by the guard p50 / p99 ms |');
console.log('|---:|---:|---:|---:|---:|');
for (const row of hitRows) console.log(row);
console.log('\n| entries | strict hit p50 / p99 ms | strict miss p50 / p99 ms | similarity hit p50 ÷ strict hit p50 |');
console.log('|---:|---:|---:|---:|');
for (const row of strictRows) console.log(row);
console.log('\ntargets: a hit p99 ≤ 1 ms at 2,000 entries, guard included; ≥ 3× faster than the naive loop');

import http from 'node:http';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime, type Runtime } from '../runtime/runtime.ts';
import { ADMIN_TOKEN } from '../test/support/runtime.ts';
import { kiosk, pct, type Kiosk } from './support/sessions.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:export — what one senior's data export costs the other seniors. One runtime (in-memory
 * PGlite, offline agent, semantic cache off so every turn reaches recall and the agent), a senior
 * holding 30,000 mood rows with summaries and 2,000 facts, and OTHERS live sessions doing paced
 * agent turns. Quiet phases (no export) and busy ones (one export of that senior, read as fast as
 * the socket allows) alternate ROUNDS times; their turn samples are pooled, so drift on a shared
 * machine hits both alike. Per export: time to first byte, to the last, the size; per phase: the
 * runtime's peak heap and longest event-loop stall. Then FOUR exports asked at once. The baseline is
 * the quiet phases of the same run.
 *   npm run bench:export [-- --rows 30000 --facts 2000 --others 10 --rounds 3]
 */
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const ROWS = arg('rows', 30_000);
const FACTS = arg('facts', 2_000);
const OTHERS = arg('others', 10);
const ROUNDS = arg('rounds', 3);
const TURN_EVERY_MS = 200;
const QUIET_MS = 5_000;
const AT_ONCE = 4;
/** About a real per-turn summary: 1,000 characters at most (mood_scores' check). */
const SUMMARY = 'Le senior a évoqué sa matinée au jardin, les tomates arrosées, la voisine venue prendre le café. '.repeat(10).slice(0, 990);
const SENTENCE = 'Ce matin je suis allée au marché avec ma voisine, nous avons parlé de ses petits-enfants';

async function seed(rt: Runtime): Promise<string> {
  const id = await rt.directory.createSenior({ displayName: 'bench-export', preferredName: 'Lucienne' });
  await rt.db.pool.query(
    `INSERT INTO mood_scores (senior_id, score, tier, source, summary, recorded_at)
     SELECT $1, 30 + i % 60, (ARRAY['preoccupant','melancolique','neutre','enjoue'])[1 + i % 4], 'per_turn', $3 || ' (' || i || ')', now() - i * interval '10 minutes'
       FROM generate_series(1, $2::int) i`,
    [id, ROWS, SUMMARY.slice(0, 980)],
  );
  // 2,000 rows one at a time under the HNSW index take a minute: the index is rebuilt once after.
  await rt.db.pool.query('DROP INDEX memory_facts_embedding_hnsw');
  await rt.db.pool.query(
    `INSERT INTO memory_facts (senior_id, fact, category, embedding, embedding_model)
     SELECT $1, 'Elle se souvient du marché de la place numéro ' || i || ', où elle achetait des fleurs le samedi avec sa sœur.',
            (ARRAY['profil','contacts','sante','localisation'])[1 + i % 4],
            (SELECT array_agg(random())::vector FROM generate_series(1, 1024) WHERE i > 0), 'bench'
       FROM generate_series(1, $2::int) i`,
    [id, FACTS],
  );
  await rt.db.pool.query('CREATE INDEX memory_facts_embedding_hnsw ON memory_facts USING hnsw (embedding vector_cosine_ops)');
  return id;
}

interface ExportRun {
  status: number;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
}

/** One export read to its end as fast as the socket gives it, the bytes discarded. */
function exportOnce(rt: Runtime, id: string): Promise<ExportRun> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${rt.url}/v1/admin/seniors/${id}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }, (res) => {
        let firstByteMs = NaN;
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          if (bytes === 0) firstByteMs = performance.now() - t0;
          bytes += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode!, firstByteMs, totalMs: performance.now() - t0, bytes }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The runtime's heap and event loop over a phase (the runtime runs in this process). */
function watch() {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let peak = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
  return () => {
    clearInterval(sampler);
    loop.disable();
    return { peakHeapMb: peak / 2 ** 20, maxStallMs: loop.max / 1e6, p99StallMs: loop.percentile(99) / 1e6 };
  };
}

/** Paced agent turns from every other session until `until` resolves; all round trips. */
async function turnsUntil(others: Kiosk[], until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.then(() => (done = true));
  const latencies: number[] = [];
  let n = 0;
  await Promise.all(
    others.map(async (k, i) => {
      await new Promise((r) => setTimeout(r, (i * TURN_EVERY_MS) / others.length));
      while (!done) {
        const started = performance.now();
        latencies.push(await k.turn(`${SENTENCE}, ${n++}.`));
        await new Promise((r) => setTimeout(r, Math.max(0, TURN_EVERY_MS - (performance.now() - started))));
      }
    }),
  );
  return latencies;
}

const load = loadavg()[0]!.toFixed(2);
const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', SEMANTIC_CACHE_PROFILE: 'off', DEV_ADMIN_TOKEN: ADMIN_TOKEN });
const rt = await startRuntime(config, { logger: createLogger('silent'), rateLimit: { perSecond: 10_000, burst: 10_000 } });
const senior = await seed(rt);
const others = await Promise.all(Array.from({ length: OTHERS }, () => kiosk(rt)));
global.gc?.();

const quiet: number[] = [];
const busy: number[] = [];
const exports: ExportRun[] = [];
const quietWatch: Array<ReturnType<ReturnType<typeof watch>>> = [];
const busyWatch: Array<ReturnType<ReturnType<typeof watch>>> = [];
for (let round = 0; round < ROUNDS; round++) {
  let stop = watch();
  quiet.push(...(await turnsUntil(others, new Promise((r) => setTimeout(r, QUIET_MS)))));
  quietWatch.push(stop());
  stop = watch();
  const running = exportOnce(rt, senior);
  busy.push(...(await turnsUntil(others, running)));
  busyWatch.push(stop());
  exports.push(await running);
}
const t0 = performance.now();
const atOnce = await Promise.all(Array.from({ length: AT_ONCE }, () => exportOnce(rt, senior)));
const atOnceMs = performance.now() - t0;
for (const k of others) k.ws.terminate();
await rt.close();

const worst = (xs: Array<ReturnType<ReturnType<typeof watch>>>) => ({
  heap: Math.max(...xs.map((x) => x.peakHeapMb)),
  stall: `${Math.max(...xs.map((x) => x.p99StallMs)).toFixed(0)} / ${Math.max(...xs.map((x) => x.maxStallMs)).toFixed(0)}`,
});
const q = worst(quietWatch);
const b = worst(busyWatch);
const whole = exports.filter((e) => e.status === 200);
console.log(
  `\nbench:export — a senior with ${ROWS.toLocaleString('en')} mood rows (summaries of ~1,000 characters) and ${FACTS.toLocaleString('en')} facts; ${OTHERS} other live sessions, an agent turn every ${TURN_EVERY_MS} ms each (offline agent, semantic cache off); ${ROUNDS} × (${QUIET_MS / 1000} s quiet, one export read to its end); EXPORT_CONCURRENCY ${config.EXPORT_CONCURRENCY}, EXPORT_QUEUE ${config.EXPORT_QUEUE}; load ${load} at start; node ${process.version}\n`,
);
console.log('| phase | turns | others’ turn p50 / p99 ms | p99 ratio | peak heap MB | event-loop delay p99 / max ms | export: first byte / whole s | size MB |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
console.log(`| quiet (baseline) | ${quiet.length} | ${pct(quiet, 50).toFixed(0)} / ${pct(quiet, 99).toFixed(0)} | 1.00× | ${q.heap.toFixed(0)} | ${q.stall} | – | – |`);
console.log(
  `| one export | ${busy.length} | ${pct(busy, 50).toFixed(0)} / ${pct(busy, 99).toFixed(0)} | **${(pct(busy, 99) / pct(quiet, 99)).toFixed(2)}×** | ${b.heap.toFixed(0)} | ${b.stall} | ${(Math.max(...whole.map((e) => e.firstByteMs)) / 1000).toFixed(2)} / ${(Math.max(...whole.map((e) => e.totalMs)) / 1000).toFixed(1)} (worst of ${whole.length}) | ${(whole[0]!.bytes / 1e6).toFixed(1)} |`,
);
const answers = atOnce.map((e) => e.status);
console.log(
  `\n${AT_ONCE} exports asked at once: ${answers.filter((s) => s === 200).length} × 200, ${answers.filter((s) => s === 503).length} × 503; all answered in ${(atOnceMs / 1000).toFixed(1)} s; first byte ${atOnce
    .filter((e) => e.status === 200)
    .map((e) => (e.firstByteMs / 1000).toFixed(2))
    .join(' / ')} s`,
);
console.log('\ntarget: others’ agent turn p99 during an export ≤ 1.2× the quiet phases’');

import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { kiosk, pct, subagent, type Kiosk } from './support/sessions.ts';

/**
 * bench:close --hot-path — what closing sessions costs the others. In one runtime (in-memory PGlite,
 * offline agent, sub-agents answering after a simulated latency), 50 live sessions do paced
 * CacheFlux turns; in quiet phases nothing else happens, in busy ones 30-turn sessions close one
 * after another; the phases alternate ROUNDS times and their samples are pooled. Also: the time
 * from one close to all its rows written.
 *   npm run bench:close -- --hot-path
 */
const OTHERS = 50;
const TURN_EVERY_MS = 50;
const PHASE_MS = 5000;
/** Quiet and busy phases alternate, so drift on a shared machine hits both alike. */
const ROUNDS = 3;
const CLOSES_PER_ROUND = 4;
const TURNS = 30;

/** Paced CacheFlux turns from every other session for `ms`; resolves with all round trips. */
async function hotPath(others: Kiosk[], ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = Date.now() + ms;
  await Promise.all(
    others.map(async (k, i) => {
      await new Promise((r) => setTimeout(r, (i * TURN_EVERY_MS) / others.length));
      while (Date.now() < end) {
        const started = Date.now();
        latencies.push(await k.turn('Bonjour'));
        await new Promise((r) => setTimeout(r, Math.max(0, TURN_EVERY_MS - (Date.now() - started))));
      }
    }),
  );
  return latencies;
}

async function run(latencyMs: number) {
  const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', CLOSE_JOBS_CONCURRENCY: '2' });
  const rt = await startRuntime(config, { logger: createLogger('silent'), subagentModel: subagent(latencyMs) });
  const others = await Promise.all(Array.from({ length: OTHERS }, () => kiosk(rt)));
  const closing: Kiosk[] = [];
  for (let i = 0; i < ROUNDS * CLOSES_PER_ROUND + 1; i++) {
    const k = await kiosk(rt);
    for (let t = 0; t < TURNS; t++) await k.turn(`Ce matin j'ai arrosé les tomates du jardin, tour ${t}`);
    closing.push(k);
  }

  // One close alone: from session.end to every row written.
  const first = closing.shift()!;
  const t0 = performance.now();
  first.ws.send(JSON.stringify({ type: 'session.end' }));
  await new Promise((r) => setTimeout(r, 20));
  await rt.closeJobs.drain(120_000);
  const closeToRows = (performance.now() - t0) / 1000;
  const rows = await rt.db.pool.query('SELECT count(*)::int AS n FROM mood_scores WHERE senior_id = $1', [first.seniorId]);

  const quiet: number[] = [];
  const busy: number[] = [];
  let pendingAtEnd = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await rt.closeJobs.drain(120_000);
    quiet.push(...(await hotPath(others, PHASE_MS)));
    // The same load while sessions close, one every PHASE_MS / CLOSES_PER_ROUND.
    const batch = closing.splice(0, CLOSES_PER_ROUND);
    const closer = (async () => {
      for (const k of batch) {
        k.ws.send(JSON.stringify({ type: 'session.end' }));
        await new Promise((r) => setTimeout(r, PHASE_MS / CLOSES_PER_ROUND));
      }
    })();
    busy.push(...(await hotPath(others, PHASE_MS)));
    await closer;
    pendingAtEnd = Math.max(pendingAtEnd, rt.closeJobs.pending);
  }
  for (const k of others) k.ws.terminate();
  await rt.close();
  return { latencyMs, closeToRows, rowsWritten: rows.rows[0].n, quiet, busy, pendingAtEnd };
}

export async function hotPathBench(): Promise<void> {
const results = [];
for (const latency of [0, 300]) results.push(await run(latency));
console.log(
  `\nbench:close — ${OTHERS} live sessions, a CacheFlux turn every ${TURN_EVERY_MS} ms each; ${ROUNDS} × (${PHASE_MS / 1000} s quiet, ${PHASE_MS / 1000} s with ${CLOSES_PER_ROUND} ${TURNS}-turn sessions closing); pool of 2; node ${process.version}\n`,
);
console.log('| sub-agent latency | one close → all rows written | rows | others p50 / p99 ms, no closes | others p50 / p99 ms, closes running | p99 ratio | most jobs queued at a phase end |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.latencyMs} ms | ${r.closeToRows.toFixed(2)} s | ${r.rowsWritten} | ${pct(r.quiet, 50).toFixed(2)} / ${pct(r.quiet, 99).toFixed(2)} | ${pct(r.busy, 50).toFixed(2)} / ${pct(r.busy, 99).toFixed(2)} | **${(pct(r.busy, 99) / pct(r.quiet, 99)).toFixed(2)}×** | ${r.pendingAtEnd} |`,
  );
}
console.log('\ntarget: closes add ≤ 10 % to the other sessions’ p99 (ratio ≤ 1.10)');
}

import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startWirePostgres } from '../test/support/pglite-server.ts';
import { ask } from './support/child.ts';
import { residentParts, type ResidentParts } from './support/smaps.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:idle-memory — where an idle runtime's resident memory goes, on the embedded defaults (PGlite
 * and pgvector in-process, offline models, no MISTRAL_API_KEY): each setup is a fresh process started
 * on a new data directory (a first start: initdb runs in the process), left idle until its RSS holds
 * still (V8 compiles PGlite's hot WebAssembly in the background for seconds after the start, and
 * gives most of that memory back when done), measured, closed,
 * then started again on the same directory (a restart) and measured again. Setups alternate within
 * each repetition, so drift on the shared machine weighs on all alike.
 *   npm run bench:idle-memory [-- --reps N --idle-s S]   (default 3 repetitions, at least 15 s idle)
 *
 * Baseline, in the same run: the runtime on main's settings before this bench (PostgreSQL's 128 MiB
 * shared_buffers, V8's own young generation, initdb in the runtime's process); beside it each saving
 * alone, `npm start` as it is now (its Node flags read from package.json), the same on a PostgreSQL
 * server, and Node alone under the same flags (the floor).
 */
const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const REPS = option('--reps', 3);
const IDLE_MS = option('--idle-s', 15) * 1000;
/** Idle means RSS within STILL_MIB over STILL_SAMPLES seconds, waited for at most SETTLE_MAX_MS after IDLE_MS. */
const STILL_MIB = 4;
const STILL_SAMPLES = 5;
const SETTLE_MAX_MS = 120_000;

/** `npm start`'s Node flags, as package.json runs it (`exec node <flags> runtime/main.ts`). */
async function startFlags(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('runtime/main.ts'));
}

interface Setup {
  label: string;
  flags: string[];
  env: Record<string, string>;
  bare?: boolean;
  /** A new data directory's initdb in the runtime's own process, as main did (see idle-memory-server.ts). */
  initdbHere?: boolean;
  /** On a PostgreSQL server (DATABASE_URL) instead of embedded PGlite. */
  server?: boolean;
}

interface Sample extends ResidentParts {
  /** From the fork to the runtime listening, ms. */
  startMs: number;
  heap: number;
  youngGen: number;
  pgliteHeap: number;
}

const flags = await startFlags();
const MAIN_BUFFERS = { PGLITE_SHARED_BUFFERS_MB: '128' };
const SETUPS: Setup[] = [
  { label: "main's settings (baseline)", flags: [], env: MAIN_BUFFERS, initdbHere: true },
  { label: 'shared_buffers 16 MiB', flags: [], env: {}, initdbHere: true },
  { label: `young generation capped (${flags.join(' ')})`, flags, env: MAIN_BUFFERS, initdbHere: true },
  { label: 'initdb in a process of its own', flags: [], env: MAIN_BUFFERS },
  { label: '`npm start` (all three)', flags, env: {} },
  { label: '`npm start`, PostgreSQL server (DATABASE_URL)', flags, env: {}, server: true },
  { label: 'Node alone, same flags (floor)', flags, env: {}, bare: true },
];
const CASES = ['first start', 'restart'] as const;

const rssMiB = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Waits until the process's RSS holds still, or gives up after SETTLE_MAX_MS (the sample then says so). */
async function settled(pid: number): Promise<void> {
  const recent: number[] = [];
  for (const deadline = Date.now() + SETTLE_MAX_MS; Date.now() < deadline; await sleep(1000)) {
    recent.push(await rssMiB(pid));
    if (recent.length > STILL_SAMPLES) recent.shift();
    if (recent.length === STILL_SAMPLES && Math.max(...recent) - Math.min(...recent) <= STILL_MIB) return;
  }
  process.stderr.write(`  RSS of pid ${pid} still moving after ${SETTLE_MAX_MS / 1000} s: measured anyway\n`);
}

async function measureOnce(setup: Setup, env: NodeJS.ProcessEnv): Promise<Sample> {
  const child: ChildProcess = fork(new URL('./idle-memory-server.ts', import.meta.url), setup.bare ? ['bare'] : setup.initdbHere ? ['initdb-here'] : [], { execArgv: setup.flags, env, stdio: 'inherit' });
  const forked = performance.now();
  try {
    await ask(child, 'ready');
    const startMs = performance.now() - forked;
    await sleep(IDLE_MS);
    await settled(child.pid!);
    const v8 = await ask<{ heap: number; youngGen: number; pgliteHeap: number }>(child, 'measure');
    return { ...residentParts(child.pid!), startMs, heap: v8.heap, youngGen: v8.youngGen, pgliteHeap: v8.pgliteHeap };
  } finally {
    const exited = once(child, 'exit');
    child.send({ type: 'close' });
    await exited;
  }
}

const samples = new Map<string, Sample[]>();
const key = (setup: Setup, c: string) => `${c}\0${setup.label}`;
const load = loadavg();
process.stderr.write(`bench:idle-memory: ${REPS} repetitions, ${IDLE_MS / 1000} s idle; load average ${load.map((x) => x.toFixed(2)).join(' ')}\n`);
for (let rep = 0; rep < REPS; rep++) {
  for (const setup of SETUPS) {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-idle-'));
    const server = setup.server ? await startWirePostgres() : null;
    // No key: the offline models. Demo data is seeded as `npm start` does (development on loopback).
    const { MISTRAL_API_KEY: _key, DATABASE_URL: _url, ...inherited } = process.env;
    const env = { ...inherited, PORT: '0', LOG_LEVEL: 'silent', PGLITE_DATA_DIR: path.join(dir, 'pglite'), ...(server ? { DATABASE_URL: server.url } : {}), ...setup.env };
    try {
      for (const c of CASES) {
        const sample = await measureOnce(setup, env);
        samples.set(key(setup, c), [...(samples.get(key(setup, c)) ?? []), sample]);
        process.stderr.write(`  rep ${rep + 1} ${c}, ${setup.label}: RSS ${sample.rss.toFixed(0)} MiB\n`);
      }
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }
}

const median = (xs: number[]) => percentile(xs, 50);
const f = (x: number) => x.toFixed(0);
console.log(`\nbench:idle-memory — idle RSS by part, MiB, median of ${REPS} (RSS: min–max); load average at start ${load.map((x) => x.toFixed(2)).join(' ')}\n`);
console.log('| start | setup | RSS | × baseline | start-up s | main V8 heap (young gen) | PGlite thread V8 heap | Wasm memories | malloc (brk + arenas) | files (node, libs) | other anon |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const c of CASES) {
  const baseline = median(samples.get(key(SETUPS[0]!, c))!.map((s) => s.rss));
  for (const setup of SETUPS) {
    const runs = samples.get(key(setup, c))!;
    const m = (pick: (s: Sample) => number) => median(runs.map(pick));
    const rss = runs.map((s) => s.rss);
    console.log(
      `| ${c} | ${setup.label} | ${f(m((s) => s.rss))} (${f(Math.min(...rss))}–${f(Math.max(...rss))}) | ${(m((s) => s.rss) / baseline).toFixed(2)}× | ${(m((s) => s.startMs) / 1000).toFixed(1)} | ${f(m((s) => s.heap))} (${f(m((s) => s.youngGen))}) | ${f(m((s) => s.pgliteHeap))} | ${f(m((s) => s.wasm))} | ${f(m((s) => s.malloc))} | ${f(m((s) => s.files))} | ${f(m((s) => s.otherAnon - s.heap - s.pgliteHeap))} |`,
    );
  }
}
console.log('\ntarget: idle RSS ≤ 350 MiB for `npm start` on the embedded defaults');

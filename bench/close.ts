import { createMistral } from '@ai-sdk/mistral';
import { parseArgs } from 'node:util';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime, type Runtime } from '../runtime/runtime.ts';
import { exitOnContractViolation } from '../test/support/contract-violations.ts';
import { FakeMistral, subagentAnswers } from '../test/support/fake-mistral.ts';
import { hotPathBench } from './close-hot-path.ts';
import { supervisorStop, type SupervisorStop } from './close-supervisor.ts';
import { kiosk, type Kiosk } from './support/sessions.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:close — do the derivations keep up with a real model's latency? One runtime (in-memory
 * PGlite, offline agent), its sub-agents on the real Mistral adapter against the local fake
 * Mistral server answering each call after LATENCY ms. N sessions of M turns (a turn every GAP ms)
 * close one after another over WINDOW s; right after the last close the runtime is closed in-process
 * (`close()`: the drain of SHUTDOWN_DRAIN_MS at SHUTDOWN_DRAIN_CONCURRENCY). Per second it samples
 * the jobs arrived, done and pending; it reports the backlog curve, the lag of every mood entry
 * behind its session's close (0 when written before it), the most turns the pending jobs held
 * (and their bytes), and what that drain lost. Baseline in the same run: CLOSE_JOBS_CONCURRENCY 2
 * (main's default); then the configured default. Those runs stop through `close()`; then the stop as a
 * supervisor sends it (close-supervisor.ts): STOP_SESSIONS sessions of M turns over STOP_WINDOW s on
 * `npm start` in its own process group, the group SIGTERMed as the last one closes, the mood entries
 * counted after a restart on its data directory; STOP_RUNS times, since whether the runtime survived the
 * second copy of the signal before the fix depended on what its event loop was doing when both came.
 *   npm run bench:close [-- --sessions 100 --turns 6 --window 90 --latency 1000 --gap 2000 --baseline 2 --stop-sessions 40 --stop-window 10 --stop-runs 3]
 *   npm run bench:close -- --stop-only   (only the process group's SIGTERM)
 *   npm run bench:close -- --hot-path   (what closes cost the other sessions' turns)
 */
const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '100' },
    turns: { type: 'string', default: '6' },
    window: { type: 'string', default: '90' },
    latency: { type: 'string', default: '1000' },
    gap: { type: 'string', default: '2000' },
    baseline: { type: 'string', default: '2' },
    'hot-path': { type: 'boolean', default: false },
    'stop-sessions': { type: 'string', default: '40' },
    'stop-window': { type: 'string', default: '10' },
    'stop-runs': { type: 'string', default: '3' },
    'stop-only': { type: 'boolean', default: false },
  },
});
const SESSIONS = Number(args.sessions);
const TURNS = Number(args.turns);
const WINDOW_MS = Number(args.window) * 1000;
const LATENCY_MS = Number(args.latency);
const GAP_MS = Number(args.gap);
/** A senior's turn as a kiosk sends it: a spoken sentence or two. */
const SENTENCE = "Ce matin je suis allée au marché avec ma voisine, on a acheté des tomates et des fraises, tour";

interface Sample {
  at: number;
  arrived: number;
  done: number;
  pending: number;
}

interface RunResult {
  name: string;
  concurrency: number;
  samples: Sample[];
  lags: number[];
  moodRows: number;
  expectedMood: number;
  peak: { transcripts: number; bytes: number };
  lost: number;
  pendingAtSigterm: number;
  dropped: number;
  retried: number;
  jobs: number;
}

const sum = async (metric: { get(): Promise<{ values: Array<{ value: number }> }> }) => (await metric.get()).values.reduce((n, v) => n + v.value, 0);

async function counts(rt: Runtime): Promise<{ done: number; dropped: number; lost: number }> {
  return { done: await sum(rt.metrics.closeJobs), dropped: await sum(rt.metrics.closeJobsDropped), lost: await sum(rt.metrics.closeJobsLost) };
}

async function run(name: string, env: Record<string, string>, fake: FakeMistral): Promise<RunResult> {
  const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', ...env });
  const subagentModel = createMistral({ apiKey: 'bench-key', baseURL: fake.baseUrl })(config.MISTRAL_SUBAGENT_MODEL);
  const rt = await startRuntime(config, { logger: createLogger('silent'), subagentModel, rateLimit: { perSecond: 10_000, burst: 10_000 } });
  // When each senior's mood rows are written: the bench reads the repository the pool writes through.
  const written = new Map<string, number[]>();
  const insert = rt.moodScores.insert.bind(rt.moodScores);
  rt.moodScores.insert = async (row) => {
    const id = await insert(row);
    const times = written.get(row.seniorId) ?? [];
    written.set(row.seniorId, [...times, performance.now()]);
    return id;
  };

  const t0 = performance.now();
  const samples: Sample[] = [];
  const sampler = setInterval(() => {
    void counts(rt).then(({ done, dropped, lost }) => {
      const pending = rt.closeJobs.pending;
      samples.push({ at: (performance.now() - t0) / 1000, arrived: done + dropped + lost + pending, done, pending });
    });
  }, 1000);

  // Session i closes at i × WINDOW / N after the first close; its turns come GAP ms apart before.
  const closedAt = new Map<string, number>();
  const sessions = Array.from({ length: SESSIONS }, async (_, i) => {
    await new Promise((r) => setTimeout(r, (i * WINDOW_MS) / SESSIONS));
    const k: Kiosk = await kiosk(rt);
    for (let t = 0; t < TURNS; t++) {
      const started = performance.now();
      await k.turn(`${SENTENCE} ${t}.`);
      if (t < TURNS - 1) await new Promise((r) => setTimeout(r, Math.max(0, GAP_MS - (performance.now() - started))));
    }
    closedAt.set(k.seniorId, performance.now());
    await k.end();
  });
  await Promise.all(sessions);
  // The SIGTERM at the end of the window: the drain, then the database closes.
  const pendingAtSigterm = rt.closeJobs.pending;
  await rt.close();
  clearInterval(sampler);
  const after = await counts(rt);
  samples.push({ at: (performance.now() - t0) / 1000, arrived: after.done + after.dropped + after.lost, done: after.done, pending: 0 });

  const lags: number[] = [];
  let moodRows = 0;
  for (const [seniorId, closed] of closedAt) {
    for (const at of written.get(seniorId) ?? []) {
      moodRows += 1;
      lags.push(Math.max(0, at - closed) / 1000);
    }
  }
  return {
    name,
    concurrency: config.CLOSE_JOBS_CONCURRENCY,
    samples,
    lags,
    moodRows,
    expectedMood: SESSIONS * TURNS,
    peak: rt.closeJobs.peak,
    lost: after.lost,
    pendingAtSigterm,
    dropped: after.dropped,
    retried: await sum(rt.metrics.closeJobsRetried),
    jobs: after.done + after.dropped + after.lost,
  };
}

/** Per 10 s of the run: jobs arrived and done per second, and the backlog at its end. */
function buckets(samples: Sample[]): Array<{ from: number; arrivals: number; completions: number; backlog: number }> {
  const out = [];
  let previous: Pick<Sample, 'arrived' | 'done'> & { at?: number } = { arrived: 0, done: 0 };
  for (let from = 0; ; from += 10) {
    const inside = samples.filter((s) => s.at >= from && s.at < from + 10);
    if (inside.length === 0) break;
    const last = inside.at(-1)!;
    const span = Math.max(1, last.at - (previous.at ?? 0));
    out.push({ from, arrivals: (last.arrived - previous.arrived) / span, completions: (last.done - previous.done) / span, backlog: last.pending });
    previous = last;
  }
  return out;
}

/** The two runs through `close()`: their table, backlog curves and targets. */
function printRuns(results: RunResult[], defaults: ReturnType<typeof loadConfig>): void {
  console.log(
    `\nbench:close — ${SESSIONS} sessions of ${TURNS} turns (one every ${GAP_MS / 1000} s), closing over ${WINDOW_MS / 1000} s; sub-agent calls ${LATENCY_MS} ms (real Mistral adapter, fake server); close() — the SIGTERM's drain, in-process — right after the last close (drain ${defaults.SHUTDOWN_DRAIN_MS / 1000} s at ${defaults.SHUTDOWN_DRAIN_CONCURRENCY}); node ${process.version}\n`,
  );
  console.log('| run | jobs | arrivals/s mean (peak 10 s) | completions/s mean (peak 10 s) | backlog peak | mood lag p50 / p99 / max | mood rows | peak held: turns (bytes) | dropped | retried | pending at close() | lost at close() |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const b = buckets(r.samples);
    const duration = r.samples.at(-1)!.at;
    const peakOf = (xs: number[]) => Math.max(...xs).toFixed(1);
    console.log(
      `| ${r.name} | ${r.jobs} | ${(r.jobs / duration).toFixed(1)} (${peakOf(b.map((x) => x.arrivals))}) | ${((r.jobs - r.lost - r.dropped) / duration).toFixed(1)} (${peakOf(b.map((x) => x.completions))}) | ${Math.max(...r.samples.map((s) => s.pending))} | ${percentile(r.lags, 50).toFixed(1)} / ${percentile(r.lags, 99).toFixed(1)} / ${Math.max(...r.lags).toFixed(1)} s | ${r.moodRows} / ${r.expectedMood} | ${r.peak.transcripts} (${(r.peak.bytes / 1024).toFixed(0)} KiB) | ${r.dropped} | ${r.retried} | ${r.pendingAtSigterm} | ${r.lost} |`,
    );
  }
  const [base, now] = results as [RunResult, RunResult];
  const backlogPeak = (r: RunResult) => Math.max(...r.samples.map((s) => s.pending));
  console.log(`\nratio default / baseline: lag p99 ${(percentile(now.lags, 99) / percentile(base.lags, 99)).toFixed(2)}×, backlog peak ${(backlogPeak(now) / backlogPeak(base)).toFixed(2)}×`);
  for (const r of results) {
    console.log(`\nbacklog curve, ${r.name} — per 10 s: arrivals/s, completions/s, backlog at the end`);
    console.log(
      buckets(r.samples)
        .map((x) => `${x.from}s: ${x.arrivals.toFixed(1)}/${x.completions.toFixed(1)}/${x.backlog}`)
        .join('  '),
    );
  }
  console.log('\ntargets: mood lag p99 ≤ 20 s, 0 lost at close() or on a SIGTERM, peak held by pending derivations ≤ 50 MB');
  console.log(`close: backlog peak ${backlogPeak(now)} jobs, lag p99 ${percentile(now.lags, 99).toFixed(1)} s, lost at close() ${now.lost}`);
}

/** The process group's SIGTERMs: what each lost, and how long the runtime took to exit. */
function printStops(stops: SupervisorStop[], drainMs: number): void {
  console.log(
    `\nSIGTERM to \`npm start\`'s process group (the runtime gets it twice: from the group and from npm) as the last of ${args['stop-sessions']} sessions of ${TURNS} turns closes, over ${args['stop-window']} s; sub-agent calls ${LATENCY_MS} ms; drain bound ${drainMs / 1000} s; ${stops.length} runs\n`,
  );
  console.log('| run | mood entries expected | written after the restart | lost | signal → exit | npm’s exit |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const [i, stop] of stops.entries()) {
    console.log(`| ${i + 1} | ${stop.expectedMood} | ${stop.moodRows} | ${stop.expectedMood - stop.moodRows} | ${stop.stopSeconds.toFixed(2)} s | ${stop.exit} |`);
  }
  const lost = stops.reduce((n, s) => n + s.expectedMood - s.moodRows, 0);
  console.log(`\nclose: lost on the process group's SIGTERM ${lost} in ${stops.length} runs (target 0)`);
}

if (args['hot-path']) {
  await hotPathBench();
} else {
  // The fake runs in this process: a message off Mistral's contract ends the benchmark.
  exitOnContractViolation();
  const fake = await new FakeMistral().start();
  fake.generate = subagentAnswers({ facts: [{ content: 'Elle aime aller au marché.', category: 'profil', confidence: 0.9 }] });
  fake.generateLatencyMs = LATENCY_MS;
  const defaults = loadConfig({ KOHAMI_ENV: 'test' });
  const results = args['stop-only'] ? [] : [await run(`baseline (concurrency ${args.baseline})`, { CLOSE_JOBS_CONCURRENCY: args.baseline }, fake), await run(`default (concurrency ${defaults.CLOSE_JOBS_CONCURRENCY})`, {}, fake)];
  const stops: SupervisorStop[] = [];
  for (let i = 0; i < Number(args['stop-runs']); i++) stops.push(await supervisorStop(fake, { sessions: Number(args['stop-sessions']), turns: TURNS, gapMs: GAP_MS, windowMs: Number(args['stop-window']) * 1000, sentence: SENTENCE }));
  await fake.stop();
  if (results.length > 0) printRuns(results, defaults);
  printStops(stops, defaults.SHUTDOWN_DRAIN_MS);
}

import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { CpuProbe, type PoolFigures, type StageFigures } from './load-probe.ts';
import { ask, stopWithFakes } from './support/child.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:load — an open-loop realistic load: N live text sessions, each sending a turn every 5 s on
 * average (Poisson arrivals, whether or not the previous reply is over: a turn during a reply is a
 * barge-in), 60 % CacheFlux greetings and 40 % turns for the agent, against a fake model streaming
 * its reply 300 ms after the request (bench/load-fakes.ts behind the runtime's real Mistral clients).
 * Runtime, fake and this generator are three processes on the same machine.
 *
 * Baseline: the fake's own latency. The runtime's overhead is the kiosk's time to the turn's first
 * reply frame minus the fake's 300 ms for turns the model answered (`agent`, `recall`), the whole time
 * for CacheFlux turns (no model); the loopback and this generator's own delays are in it. How late the
 * fake's timers fired is shown beside, so that it can be told apart.
 *   npm run bench:load [-- N1 N2 …]   (default 100 500; BENCH_SECONDS=20 measured after BENCH_WARMUP=5)
 */
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const SIZES = sizes.length > 0 ? sizes : [100, 500];
const MEASURE_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 5);
/** Turns sent in the measured window get this long to finish (the turn budget is 2.5 s). */
const DRAIN_MS = 4000;
const MEAN_INTERVAL_MS = 5000;
const CACHE_SHARE = 0.6;
const FIRST_TOKEN_MS = 300;
const TARGETS = { overheadP99Ms: 10, loopP99Ms: 20 };
const GREETINGS = ['Bonjour', 'Salut', 'Coucou', 'Bonsoir'];
const TOPICS = ['Ce matin j’ai arrosé les tomates du jardin', 'Ma fille m’a téléphoné hier soir', 'Il a plu toute la journée chez moi', 'J’ai revu ma voisine au marché'];

/** Each socket takes a descriptor in this process and one in the runtime's. */
function checkLimits(n: number): void {
  const need = n + 1024;
  const raw = execFileSync('sh', ['-c', 'ulimit -n']).toString().trim();
  const limit = raw === 'unlimited' ? Infinity : Number(raw);
  if (limit < need) {
    console.error(`bench:load: ${n} sessions need at least ${need} open files per process, but \`ulimit -n\` is ${raw}. Raise it in this shell (\`ulimit -n ${need}\`, within \`ulimit -Hn\`) or run smaller sizes.`);
    process.exit(1);
  }
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  if (high - low < n + 1000) {
    console.error(`bench:load: ${n} loopback connections need as many local ports; net.ipv4.ip_local_port_range allows ${high - low}.`);
    process.exit(1);
  }
}

type Kind = 'cache' | 'agent';
/** The runtime's memory after full collections (process.memoryUsage()). */
interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

interface Sent {
  kind: Kind;
  sentAt: number;
  firstAt?: number;
}
interface Answered extends Sent {
  firstAt: number;
  flux: string;
  interrupted: boolean;
}

/** Delay until the next Poisson arrival. */
const nextArrival = () => -Math.log(1 - Math.random()) * MEAN_INTERVAL_MS;

class LoadKiosk {
  readonly pending = new Map<string, Sent>();
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;

  private readonly ws: WebSocket;
  private readonly name: string;
  private readonly sink: { answered: Answered[]; errors: Map<string, number> };

  private constructor(
    ws: WebSocket,
    name: string,
    sink: { answered: Answered[]; errors: Map<string, number> },
  ) {
    this.ws = ws;
    this.name = name;
    this.sink = sink;
    ws.on('message', (raw) => this.receive(raw.toString()));
  }

  static open(url: string, index: number, sink: LoadKiosk['sink']): Promise<LoadKiosk> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${url}?token=kiosk_bench_${index}`);
      ws.once('error', reject);
      ws.once('open', () => {
        ws.send(JSON.stringify({ type: 'session.start' }));
        ws.once('message', (raw) => {
          const frame = JSON.parse(raw.toString()) as { type: string };
          if (frame.type !== 'session.ready') return reject(new Error(`kiosk ${index}: expected session.ready, got ${raw.toString()}`));
          resolve(new LoadKiosk(ws, `k${index}`, sink));
        });
      });
    });
  }

  start(): void {
    const fire = () => {
      this.turn();
      this.timer = setTimeout(fire, nextArrival());
    };
    this.timer = setTimeout(fire, nextArrival());
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  close(): void {
    this.stop();
    this.ws.terminate();
  }

  private turn(): void {
    const kind: Kind = Math.random() < CACHE_SHARE ? 'cache' : 'agent';
    const seq = this.seq++;
    const turnId = `${this.name}-${seq}`;
    // Each agent turn is worded anew, so that the semantic cache never answers it instead of the model.
    const transcript = kind === 'cache' ? GREETINGS[seq % GREETINGS.length]! : `${TOPICS[seq % TOPICS.length]!}, ${this.name} ${seq}`;
    this.pending.set(turnId, { kind, sentAt: performance.now() });
    this.ws.send(JSON.stringify({ type: 'turn', turnId, transcript }));
  }

  private receive(raw: string): void {
    const frame = JSON.parse(raw) as { type: string; turnId?: string; flux?: string; interrupted?: boolean; code?: string };
    if (frame.type === 'error') this.sink.errors.set(frame.code ?? '?', (this.sink.errors.get(frame.code ?? '?') ?? 0) + 1);
    if (frame.type !== 'reply.delta' && frame.type !== 'reply.done') return;
    const sent = this.pending.get(frame.turnId!);
    if (!sent) return;
    sent.firstAt ??= performance.now();
    if (frame.type !== 'reply.done') return;
    this.pending.delete(frame.turnId!);
    this.sink.answered.push({ ...sent, firstAt: sent.firstAt, flux: frame.flux!, interrupted: frame.interrupted === true });
  }
}


interface Row {
  n: number;
  turnsPerSecond: number;
  all: number[];
  cache: number[];
  agent: number[];
  sos: number;
  lost: number;
  bargeIns: number;
  other: number;
  errors: string;
  loopP99Ms: number;
  generatorLoopP99Ms: number;
  fakeLateP99Ms: number;
  /** CPU of each process over the measured window, in % of one core (the machine has 2). */
  cpu: { runtime: number; fakes: number; generator: number };
  stages: StageFigures;
  pool: PoolFigures;
  /** The runtime's event loops: how busy its main thread and its database thread were (%). */
  busy: { main: number; database: number };
  rssPerSessionKiB: number;
  /** What one answered turn cost the runtime (busy or CPU time over the window ÷ turns answered in it). */
  cost: { turns: number; agentTurns: number; mainMsPerTurn: number; cpuMsPerTurn: number; cpuMsPerAgentTurn: number };
  load: [number, number];
  held: boolean;
}

async function run(n: number, fakes: ChildProcess, fakesUrl: string): Promise<Row> {
  const load0 = loadavg()[0]!;
  const server = fork(new URL('./load-server.ts', import.meta.url), [String(n), String(FIRST_TOKEN_MS)], {
    execArgv: ['--expose-gc', ...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [])],
    env: { ...process.env, MISTRAL_BASE_URL: fakesUrl },
    stdio: 'inherit',
  });
  const kiosks: LoadKiosk[] = [];
  try {
    const { url } = await ask<{ url: string }>(server, 'ready');
    const base = await ask<Memory>(server, 'memory');
    const sink = { answered: [] as Answered[], errors: new Map<string, number>() };
    for (let i = 0; i < n; i += 200) {
      kiosks.push(...(await Promise.all(Array.from({ length: Math.min(200, n - i) }, (_, j) => LoadKiosk.open(url, i + j + 1, sink)))));
    }
    const idle = await ask<Memory & { sessions: number }>(server, 'memory');
    if (idle.sessions !== n) throw new Error(`expected ${n} live sessions, found ${idle.sessions}`);
    const perSession = (k: keyof Memory) => ((idle[k] - base[k]) / n / 1024).toFixed(1);
    process.stderr.write(`N=${n}: ${n} sessions live (KiB per idle session: RSS ${perSession('rss')}, JS heap ${perSession('heapUsed')}, external ${perSession('external')}); ${WARMUP_SECONDS} s warm-up, ${MEASURE_SECONDS} s measured\n`);

    for (const k of kiosks) k.start();
    await new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000));
    await Promise.all([ask(server, 'reset'), ask(fakes, 'reset')]);
    const generatorLoop = monitorEventLoopDelay({ resolution: 2 });
    generatorLoop.enable();
    const generatorCpu = new CpuProbe();
    const from = performance.now();
    await new Promise((r) => setTimeout(r, MEASURE_SECONDS * 1000));
    const to = performance.now();
    generatorLoop.disable();
    const generatorCpuPercent = generatorCpu.share();
    for (const k of kiosks) k.stop();
    const [m, fake] = await Promise.all([
      ask<{ loopP99Ms: number; cpuPercent: number; busy: Row['busy']; stages: StageFigures; pool: PoolFigures }>(server, 'measure'),
      ask<{ lateP99Ms: number; cpuPercent: number }>(fakes, 'measure'),
    ]);
    await new Promise((r) => setTimeout(r, DRAIN_MS));

    const inWindow = (s: Sent) => s.sentAt >= from && s.sentAt < to;
    const answered = sink.answered.filter(inWindow);
    const lost = kiosks.reduce((count, k) => count + [...k.pending.values()].filter(inWindow).length, 0);
    const cache: number[] = [];
    const agent: number[] = [];
    let sos = 0;
    let bargeIns = 0;
    let other = 0;
    for (const a of answered) {
      const ttf = a.firstAt - a.sentAt;
      if (a.flux === 'sos') sos += 1;
      else if (a.interrupted) bargeIns += 1;
      else if (a.kind === 'cache' && a.flux === 'cache') cache.push(ttf);
      else if (a.kind === 'agent' && (a.flux === 'agent' || a.flux === 'recall')) agent.push(ttf - FIRST_TOKEN_MS);
      else other += 1;
    }
    const worstP99 = Math.max(percentile(cache, 99), percentile(agent, 99));
    const windowMs = to - from;
    const agentAnswered = answered.filter((a) => a.kind === 'agent').length;
    return {
      n,
      turnsPerSecond: answered.length / ((to - from) / 1000),
      all: [...cache, ...agent],
      cache,
      agent,
      sos,
      lost,
      bargeIns,
      other,
      errors: [...sink.errors].map(([code, count]) => `${code} ${count}`).join(', ') || '–',
      loopP99Ms: m.loopP99Ms,
      generatorLoopP99Ms: generatorLoop.percentile(99) / 1e6,
      fakeLateP99Ms: fake.lateP99Ms,
      cpu: { runtime: m.cpuPercent, fakes: fake.cpuPercent, generator: generatorCpuPercent },
      stages: m.stages,
      busy: m.busy,
      pool: m.pool,
      rssPerSessionKiB: (idle.rss - base.rss) / n / 1024,
      cost: {
        turns: answered.length,
        agentTurns: agentAnswered,
        mainMsPerTurn: ((m.busy.main / 100) * windowMs) / answered.length,
        cpuMsPerTurn: ((m.cpuPercent / 100) * windowMs) / answered.length,
        cpuMsPerAgentTurn: ((m.cpuPercent / 100) * windowMs) / agentAnswered,
      },
      load: [load0, loadavg()[0]!],
      held: worstP99 <= TARGETS.overheadP99Ms && m.loopP99Ms <= TARGETS.loopP99Ms && sos === 0 && lost === 0,
    };
  } finally {
    for (const k of kiosks) k.close();
    server.kill(process.env.BENCH_PROF ? 'SIGTERM' : 'SIGKILL');
    await once(server, 'exit');
  }
}

checkLimits(Math.max(...SIZES));
const fakes = fork(new URL('./load-fakes.ts', import.meta.url), [String(FIRST_TOKEN_MS)], { execArgv: [], stdio: 'inherit' });
stopWithFakes(fakes);
const rows: Row[] = [];
try {
  const { baseUrl } = await ask<{ baseUrl: string }>(fakes, 'ready');
  for (const n of [...SIZES].sort((a, b) => a - b)) {
    const row = await run(n, fakes, baseUrl);
    rows.push(row);
    process.stderr.write(`N=${n}: ${row.turnsPerSecond.toFixed(0)} turns/s, overhead p99 ${percentile(row.all, 99).toFixed(2)} ms, event loop p99 ${row.loopP99Ms.toFixed(1)} ms, ${row.sos} SOS\n`);
  }
} finally {
  fakes.kill('SIGTERM');
}

const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const pp = (xs: number[]) => `${f(percentile(xs, 50), 2)} / ${f(percentile(xs, 99), 2)}`;
console.log(
  `\nbench:load — open loop, a turn every ${MEAN_INTERVAL_MS / 1000} s per session on average (Poisson), ${CACHE_SHARE * 100} % CacheFlux / ${100 - CACHE_SHARE * 100} % agent; fake model first token ${FIRST_TOKEN_MS} ms; ${MEASURE_SECONDS} s measured after ${WARMUP_SECONDS} s warm-up; loopback, node ${process.version}\n`,
);
console.log('overhead = kiosk time to the first reply frame − the fake’s 300 ms (agent turns) or the whole time (CacheFlux turns)\n');
console.log(
  '| N sessions | turns/s | overhead p50 / p99 ms | CacheFlux p50 / p99 ms | agent p50 / p99 ms | SOS | unanswered | barge-ins | other fluxes | errors | event loop p99 ms | RSS KiB / idle session | fake late p99 ms | generator loop p99 ms | load avg | held |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.n} | ${f(r.turnsPerSecond, 0)} | ${pp(r.all)} | ${pp(r.cache)} | ${pp(r.agent)} | ${r.sos} | ${r.lost} | ${r.bargeIns} | ${r.other} | ${r.errors} | ${f(r.loopP99Ms)} | ${f(r.rssPerSessionKiB)} | ${f(r.fakeLateP99Ms)} | ${f(r.generatorLoopP99Ms)} | ${f(r.load[0], 2)} → ${f(r.load[1], 2)} | ${r.held ? 'yes' : 'no'} |`,
  );
}
console.log('\nWhere agent turns spend their time (runtime process: XState inspection events; the pool: its query and connect timed), and each process’s CPU over the measured window (% of one core; the machine has 2):\n');
console.log('| N sessions | agent turns | TURN → recall p50 / p99 ms | recall | semantic cache | agent → first chunk − fake | pool wait p50 / p99 ms | query round trip p50 / p99 ms | most waiting | queries/s (top 4) | CPU runtime / fakes / generator % | runtime busy: main / database thread % | longest query (connection held) ms |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|');
for (const r of rows) {
  const st = (name: string) => r.stages.stages[name]!.map((x) => f(x, 1)).join(' / ');
  const top = Object.entries(r.pool.perSecond).slice(0, 4).map(([k, v]) => `${k} ${v}`).join('; ');
  console.log(
    `| ${r.n} | ${r.stages.turns} | ${st('TURN → recall')} | ${st('recall')} | ${st('semantic cache')} | ${st('agent → first chunk − fake')} | ${r.pool.waitMs.map((x) => f(x, 1)).join(' / ')} | ${r.pool.roundTripMs.map((x) => f(x, 1)).join(' / ')} | ${r.pool.maxWaiting} (pool ${r.pool.size}) | ${top} | ${f(r.cpu.runtime, 0)} / ${f(r.cpu.fakes, 0)} / ${f(r.cpu.generator, 0)} | ${f(r.busy.main, 0)} / ${f(r.busy.database, 0)} | ${Object.entries(r.pool.longestMs).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, v]) => `${k} ${v}`).join('; ')} |`,
  );
}
console.log('\nWhat a turn costs the runtime: its main thread’s busy time, and its CPU (every thread: main, database, GC helpers), over the measured window ÷ the turns answered in it (CacheFlux and agent turns, at this mix); “per agent turn” charges all of it to the agent turns. One main thread holds at most 1000 ÷ (main ms / turn) turns/s:\n');
console.log('| N sessions | turns answered (agent) | main thread ms / turn | CPU ms / turn | CPU ms / agent turn | main thread ceiling turns/s |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.n} | ${r.cost.turns} (${r.cost.agentTurns}) | ${f(r.cost.mainMsPerTurn, 3)} | ${f(r.cost.cpuMsPerTurn, 3)} | ${f(r.cost.cpuMsPerAgentTurn, 3)} | ${f(1000 / r.cost.mainMsPerTurn, 0)} |`);
}
console.log(`\ntargets: overhead p99 ≤ ${TARGETS.overheadP99Ms} ms (CacheFlux and agent each), event loop delay p99 ≤ ${TARGETS.loopP99Ms} ms, 0 SOS, no turn unanswered; RSS ≤ 30 KiB per idle session`);
const held = rows.filter((r) => r.held).at(-1);
const shown = held ?? rows[0]!;
console.log(`load: ${held ? held.n : 0} sessions held, overhead p99 ${f(Math.max(percentile(shown.cache, 99), percentile(shown.agent, 99)), 2)} ms, ${shown.sos} SOS`);

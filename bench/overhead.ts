import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { TurnStages } from './overhead-server.ts';
import { ask, stopWithFakes } from './support/child.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:overhead — the runtime's own share of an agent turn's wait. The real runtime (own process,
 * its real Mistral clients) talks to fakes with fixed latencies (own process): chat first byte
 * BENCH_CHAT_MS, each embedding BENCH_EMBED_MS. Overhead = the kiosk's time to its first
 * `reply.delta` (`reply.done` for replies without a model) − the fakes' latencies of the calls the
 * turn made. Baseline in the same run: the same fakes timed from a bare client (Node's http on a keep-alive
 * connection, as the runtime's Mistral clients) — what one embedding plus the chat's first byte cost with no runtime around them.
 *   npm run bench:overhead [-- N1 N2 …]   (default 1 1000 10000 sessions)
 * One session: sequential turns (agent, CacheFlux, semantic cache hits). N sessions: all live, and
 * agent turns at BENCH_RATE per second in all (Poisson) on sessions drawn at random among the first
 * 1,000 (the others held live and idle), so the figure
 * is the per-turn overhead with N sessions held, not a throughput (bench:load measures that).
 * BENCH_TRACES=on: the runtime exports its traces (OTLP/HTTP) to a collector in the fakes' process. BENCH_PROF=1: a CPU profile of the runtime over the measured turns. N sessions: each sends an agent turn every 5 s on average (Poisson).
 */
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const SIZES = sizes.length > 0 ? sizes : [1, 1000, 10000];
const CHAT_MS = Number(process.env.BENCH_CHAT_MS ?? 20);
const EMBED_MS = Number(process.env.BENCH_EMBED_MS ?? 5);
const TURNS = Number(process.env.BENCH_TURNS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARM_UP = 20;
const RATE = Number(process.env.BENCH_RATE ?? 20);
const TRACES = process.env.BENCH_TRACES === 'on';
/** Sessions the turns go to (they have facts to recall); the others are held live and idle. */
const TALKING = 1_000;
const THEMES = ['jardin', 'marché', 'village', 'voyage', 'livre', 'chanson', 'film', 'repas', 'voisin', 'musée'];

interface Result {
  turnId: string;
  sent: number;
  delta?: number;
  done?: number;
  flux?: string;
}

const question = (k: number, i: number) => `Pouvez-vous me parler du ${THEMES[i % THEMES.length]} numéro ${k * 100_000 + i} ?`;
const fmt = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(2));

class BenchKiosk {
  private readonly pending = new Map<string, { result: Result; resolve: (r: Result) => void }>();
  private seq = 0;
  readonly ws: WebSocket;
  readonly k: number;

  constructor(
    ws: WebSocket,
    k: number,
  ) {
    this.ws = ws;
    this.k = k;
    ws.on('message', (raw) => {
      const at = performance.now();
      const frame = JSON.parse(raw.toString()) as { type: string; turnId?: string; flux?: string };
      const waiting = frame.turnId ? this.pending.get(frame.turnId) : undefined;
      if (!waiting) return;
      if (frame.type === 'reply.delta') waiting.result.delta ??= at;
      if (frame.type !== 'reply.done') return;
      this.pending.delete(frame.turnId!);
      waiting.result.done = at;
      waiting.result.flux = frame.flux!;
      waiting.resolve(waiting.result);
    });
  }

  static async open(url: string, k: number): Promise<BenchKiosk> {
    const ws = new WebSocket(`${url}?token=kiosk_bench_${k}`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ type: 'session.start' }));
    await new Promise((resolve) => ws.once('message', resolve));
    return new BenchKiosk(ws, k);
  }

  turn(transcript: string): Promise<Result> {
    const turnId = `k${this.k}-t${this.seq++}`;
    return new Promise((resolve) => {
      this.pending.set(turnId, { result: { turnId, sent: performance.now() }, resolve });
      this.ws.send(JSON.stringify({ type: 'turn', turnId, transcript }));
    });
  }
}

/** The bare client: Node's http on a keep-alive connection, as the runtime's Mistral clients make their requests. */
const bareAgent = new http.Agent({ keepAlive: true });

/** POSTs `body` and resolves when the answer's first bytes have come, then when the whole of it has. */
function post(url: string, body: unknown): Promise<{ first: Promise<void>; end: Promise<void> }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: bareAgent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } });
    req.on('error', reject);
    req.on('response', (res) => {
      const first = new Promise<void>((r) => res.once('data', () => r()));
      const end = new Promise<void>((r) => res.on('end', r));
      res.resume();
      resolve({ first, end });
    });
    req.end(text);
  });
}

/** The fakes from a bare client: one embedding's round trip, the chat stream's first byte. */
async function bare(fakeUrl: string, i: number): Promise<{ embed: number; chat: number }> {
  let t = performance.now();
  await (await post(`${fakeUrl}/embeddings`, { model: 'mistral-embed', input: [question(0, i)] })).end;
  const embed = performance.now() - t;
  t = performance.now();
  const res = await post(`${fakeUrl}/chat/completions`, { model: 'mistral-small-2603', stream: true, messages: [{ role: 'user', content: question(0, i) }] });
  await res.first;
  const chat = performance.now() - t;
  await res.end;
  return { embed, chat };
}

function startChild(script: string, args: string[]): ChildProcess {
  return fork(new URL(script, import.meta.url), args, { execArgv: [], stdio: 'inherit' });
}

interface SizeReport {
  n: number;
  agent: number[];
  cache: number[];
  semantic: number[];
  stages: Record<'before recall' | 'recall' | 'semantic cache' | 'agent (to first chunk)' | 'kiosk ⇄ machine', number[]>;
  bareAgent: number[];
  bareExcess: number[];
  /** One session: each turn's kiosk time to first delta − the bare client's embedding + first byte measured just before it. */
  paired: number[];
  embedsPerTurn: number[];
  load: string;
}

async function measure(fakeUrl: string, n: number, collector: string): Promise<SizeReport> {
  const server = startChild('./overhead-server.ts', [fakeUrl, String(n), String(Math.min(n, TALKING)), TRACES ? collector : '']);
  const { url } = await ask<{ url: string }>(server, 'ready');
  const kiosks: BenchKiosk[] = [];
  for (let k = 1; k <= n; k += 200) kiosks.push(...(await Promise.all(Array.from({ length: Math.min(200, n - k + 1) }, (_, j) => BenchKiosk.open(url, k + j)))));
  const agentTurns: Result[] = [];
  const cacheTurns: Result[] = [];
  const semanticTurns: Result[] = [];
  const bares: Array<{ embed: number; chat: number }> = [];

  if (n === 1) {
    const kiosk = kiosks[0]!;
    for (let i = 0; i < WARM_UP; i++) await kiosk.turn(question(1, i));
    await ask(server, 'stages');
    for (let i = WARM_UP; i < WARM_UP + TURNS; i++) {
      bares.push(await bare(fakeUrl, i));
      agentTurns.push(await kiosk.turn(question(1, i)));
      if (i % 4 === 0) cacheTurns.push(await kiosk.turn('Bonjour'));
      // The same question again: the semantic cache answers it.
      if (i % 4 === 2) semanticTurns.push(await kiosk.turn(question(1, i)));
    }
  } else {
    const busy = new Set<BenchKiosk>();
    const measureFrom = performance.now() + 2000;
    const deadline = measureFrom + SECONDS * 1000;
    const pending: Array<Promise<void>> = [];
    let stagesCleared = false;
    for (let i = 0; performance.now() < deadline; i++) {
      await sleep(-Math.log(1 - Math.random()) * (1000 / RATE));
      if (!stagesCleared && performance.now() >= measureFrom) {
        stagesCleared = true;
        await ask(server, 'stages');
      }
      const kiosk = kiosks[Math.floor(Math.random() * Math.min(n, TALKING))]!;
      if (busy.has(kiosk)) continue;
      busy.add(kiosk);
      const measuring = stagesCleared;
      pending.push(
        kiosk.turn(question(kiosk.k, i)).then((result) => {
          busy.delete(kiosk);
          if (measuring) agentTurns.push(result);
        }),
      );
      if (measuring && i % 2 === 0) pending.push(bare(fakeUrl, i).then((b) => void bares.push(b)));
    }
    await Promise.all(pending);
  }
  const load = loadavg()[0]!.toFixed(2);
  const { turns } = await ask<{ turns: TurnStages[] }>(server, 'stages');
  // The profile (BENCH_PROF=1) is written before the process goes.
  await sleep(process.env.BENCH_PROF === '1' ? 1000 : 0);
  for (const kiosk of kiosks) kiosk.ws.terminate();
  server.kill('SIGINT');
  await new Promise((resolve) => server.once('exit', resolve));

  const byId = new Map(turns.map((s) => [s.turnId, s]));
  const report: SizeReport = {
    n,
    agent: [],
    cache: [],
    semantic: [],
    stages: { 'before recall': [], recall: [], 'semantic cache': [], 'agent (to first chunk)': [], 'kiosk ⇄ machine': [] },
    bareAgent: bares.map((b) => b.embed + b.chat),
    bareExcess: bares.map((b) => b.embed + b.chat - EMBED_MS - CHAT_MS),
    paired: [],
    embedsPerTurn: [],
    load,
  };
  const within = (s: TurnStages, from: number | undefined, to: number | undefined) => s.embeds.filter((t) => t >= (from ?? Infinity) && t < (to ?? -Infinity)).length;
  for (const [i, r] of agentTurns.entries()) {
    const s = byId.get(r.turnId);
    if (!s || r.delta === undefined || s.firstChunk === undefined || s.recall === undefined || s.semanticCache === undefined || s.agent === undefined) continue;
    report.embedsPerTurn.push(s.embeds.length);
    report.agent.push(r.delta - r.sent - s.embeds.length * EMBED_MS - CHAT_MS);
    const b = n === 1 ? bares[i] : undefined;
    if (b) report.paired.push(r.delta - r.sent - s.embeds.length * b.embed - b.chat);
    report.stages['before recall'].push(s.recall - s.turn);
    report.stages.recall.push(s.semanticCache - s.recall - within(s, s.recall, s.semanticCache) * EMBED_MS);
    report.stages['semantic cache'].push(s.agent - s.semanticCache - within(s, s.semanticCache, s.agent) * EMBED_MS);
    report.stages['agent (to first chunk)'].push(s.firstChunk - s.agent - CHAT_MS);
    report.stages['kiosk ⇄ machine'].push(r.delta - r.sent - (s.firstChunk - s.turn));
  }
  for (const r of cacheTurns) if (r.flux === 'cache') report.cache.push(r.done! - r.sent);
  for (const r of semanticTurns) {
    const s = byId.get(r.turnId);
    if (r.flux === 'semantic_cache' && s) report.semantic.push(r.done! - r.sent - s.embeds.length * EMBED_MS);
  }
  return report;
}

const fake = startChild('./overhead-fake.ts', [String(CHAT_MS), String(EMBED_MS)]);
stopWithFakes(fake);
const { url: fakeUrl, collector } = await ask<{ url: string; collector: string }>(fake, 'ready');
const reports: SizeReport[] = [];
for (const n of SIZES) reports.push(await measure(fakeUrl, n, collector));
fake.kill('SIGINT');

console.log(`\nbench:overhead — fakes: chat first byte ${CHAT_MS} ms, embedding ${EMBED_MS} ms; N sessions: ${RATE} agent turns/s in all; traces ${TRACES ? 'on (OTLP/HTTP)' : 'off'}; node ${process.version}\n`);
console.log('| sessions | what | turns | p50 ms | p99 ms | load (1 min) |');
console.log('|---:|---|---:|---:|---:|---:|');
for (const r of reports) {
  const row = (what: string, xs: number[]) => console.log(`| ${r.n} | ${what} | ${xs.length} | ${fmt(percentile(xs, 50))} | ${fmt(percentile(xs, 99))} | ${r.load} |`);
  row('**agent turn: runtime overhead** (first delta − fakes)', r.agent);
  for (const [stage, xs] of Object.entries(r.stages)) row(`  ↳ ${stage}`, xs);
  if (r.cache.length) row('cache flux turn (reply.done)', r.cache);
  if (r.semantic.length) row('semantic cache hit (reply.done − embeddings)', r.semantic);
  row('_baseline: bare client, embedding + chat first byte_', r.bareAgent);
  row('_baseline: its excess over the fixed latencies_', r.bareExcess);
  if (r.paired.length) row('agent turn − the bare client just before it (paired)', r.paired);
  row('embedding requests per agent turn', r.embedsPerTurn);
}
const one = reports.find((r) => r.n === 1) ?? reports[0]!;
console.log(`\noverhead: agent p50 ${fmt(percentile(one.agent, 50))} ms, p99 ${fmt(percentile(one.agent, 99))} ms`);

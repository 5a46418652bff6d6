import { execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import WebSocket from 'ws';
import { CacheFluxAdapter, loadCacheVariations } from '../adapters/fluxes/cache-flux.adapter.ts';
import { parseClientFrame } from '../runtime/protocol/messages.ts';
import { ask } from './support/child.ts';
import { percentile } from './support/stats.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:gateway — the same load generator drives a bare Fastify echo server and the
 * runtime, with N concurrent kiosks doing CacheFlux turns on loopback.
 *   npm run bench:gateway [-- N1 N2 …]   (default 1000 5000)
 */
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
/**
 * With BENCH_PIN=1 (and taskset), the server runs on core 0 and this generator on core 1, so the
 * ratio compares servers, not how much CPU each leaves a generator sharing its cores.
 */
const PIN = process.env.BENCH_PIN === '1';
if (PIN) execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
const SIZES = sizes.length > 0 ? sizes : [1000, 5000];
const LOAD_SECONDS = 5;
const TURN = (id: number) => JSON.stringify({ type: 'turn', turnId: `t${id}`, transcript: 'Bonjour' });

interface Result {
  kind: string;
  n: number;
  throughput: number;
  p50: number;
  p99: number;
  rssPerSessionKiB: number;
  /** The server process's CPU time (all threads) during the flood, per turn answered. */
  cpuPerTurnMicros: number;
}

function connect(url: string, kind: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('error', reject);
    ws.once('open', () => {
      if (kind === 'echo') return resolve(ws);
      ws.send(JSON.stringify({ type: 'session.start' }));
      ws.once('message', () => resolve(ws));
    });
  });
}


async function run(kind: 'echo' | 'runtime', n: number): Promise<Result> {
  // Both servers are profiled: the share of the one ws write per turn they both pay is the yardstick.
  const prof = process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=/tmp/prof/${kind}-${n}`] : [];
  const child = fork(new URL('./gateway-server.ts', import.meta.url), [kind, String(n)], { execArgv: ['--expose-gc', ...prof], stdio: 'inherit' });
  if (PIN) execFileSync('taskset', ['-a', '-p', '-c', '0', String(child.pid)], { stdio: 'ignore' });
  const { url } = await ask<{ url: string }>(child, 'ready');
  const base = await ask<{ rss: number }>(child, 'measure');
  const urls = Array.from({ length: n }, (_, i) => (kind === 'runtime' ? `${url}?token=kiosk_bench_${i + 1}` : url));
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += 200) sockets.push(...(await Promise.all(urls.slice(i, i + 200).map((u) => connect(u, kind)))));
  const idle = await ask<{ rss: number; sessions: number }>(child, 'measure');
  if (kind === 'runtime' && idle.sessions !== n) throw new Error(`expected ${n} live sessions, found ${idle.sessions}`);

  const latencies: number[] = [];
  const cpuBefore = await ask<{ micros: number }>(child, 'cpu');
  const deadline = Date.now() + LOAD_SECONDS * 1000;
  let seq = 0;
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          let sentAt = 0;
          const fire = () => {
            if (Date.now() >= deadline) return resolve();
            sentAt = performance.now();
            ws.send(TURN(seq++));
          };
          ws.on('message', (raw) => {
            if (kind === 'runtime' && !raw.toString().includes('"reply.done"')) return;
            latencies.push(performance.now() - sentAt);
            fire();
          });
          fire();
        }),
    ),
  );
  const cpuAfter = await ask<{ micros: number }>(child, 'cpu');
  for (const ws of sockets) ws.terminate();
  child.kill(process.env.BENCH_PROF ? 'SIGINT' : 'SIGKILL');
  await once(child, 'exit');
  return {
    kind,
    n,
    throughput: latencies.length / LOAD_SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    rssPerSessionKiB: (idle.rss - base.rss) / n / 1024,
    cpuPerTurnMicros: (cpuAfter.micros - cpuBefore.micros) / latencies.length,
  };
}

/** CacheFlux resolution per call, against parsing the very frame that carries the turn (same run). */
function cacheFluxCost(): { resolveNs: number; parseNs: number } {
  const cache = new CacheFluxAdapter(loadCacheVariations());
  const profile = { preferredName: 'Marie', isFreshSenior: false };
  const frame = TURN(1);
  const n = 200_000;
  const time = (fn: () => unknown) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    return ((performance.now() - t0) * 1e6) / n;
  };
  time(() => cache.resolve('Bonjour', profile));
  time(() => parseClientFrame(frame));
  return { resolveNs: time(() => cache.resolve('Bonjour', profile)), parseNs: time(() => parseClientFrame(frame)) };
}

const cost = cacheFluxCost();
const rows: string[] = [];
const fmt = (x: number, d = 1) => x.toFixed(d);
for (const n of SIZES) {
  const echo = await run('echo', n);
  const runtime = await run('runtime', n);
  rows.push(
    `| ${n} | ${fmt(echo.throughput, 0)} | ${fmt(runtime.throughput, 0)} | **${fmt(runtime.throughput / echo.throughput, 2)}×** | ${fmt(echo.p50, 2)} / ${fmt(echo.p99, 2)} | ${fmt(runtime.p50, 2)} / ${fmt(runtime.p99, 2)} | **${fmt(runtime.p99 / echo.p99, 2)}×** | ${fmt(echo.rssPerSessionKiB)} | ${fmt(runtime.rssPerSessionKiB)} | ${fmt(echo.cpuPerTurnMicros)} / ${fmt(runtime.cpuPerTurnMicros)} | **${fmt(runtime.cpuPerTurnMicros / echo.cpuPerTurnMicros, 2)}×** |`,
  );
}
console.log(`\nbench:gateway — ${LOAD_SECONDS} s closed-loop CacheFlux turns per size, loopback, node ${process.version}\n`);
console.log('| N kiosks | echo turns/s | runtime turns/s | runtime/echo | echo p50 / p99 ms | runtime p50 / p99 ms | p99 ratio | echo RSS KiB/socket | runtime RSS KiB/idle session | echo / runtime CPU µs per turn | CPU per turn ratio |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log(`\nCacheFlux resolve: ${fmt(cost.resolveNs, 0)} ns per turn (${fmt(cost.resolveNs / 1e6, 4)} ms); parsing the turn frame: ${fmt(cost.parseNs, 0)} ns (ratio ${fmt(cost.resolveNs / cost.parseNs, 2)}×)`);
console.log('\ntargets: runtime/echo ≥ 0.5× (0.8× the long-run goal) and p99 ratio ≤ 2× at 5,000 kiosks, runtime RSS ≤ 30 KiB per idle session');

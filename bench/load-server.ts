import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { AgentStageProbe, CpuProbe, PoolProbe, ThreadProbe } from './load-probe.ts';
import { grantAllConsents, seedBenchSeniors } from './support/seed-seniors.ts';

/**
 * The runtime side of bench:load, in its own process so that its RSS and event loop are its own:
 * the real runtime with its real Mistral clients against MISTRAL_BASE_URL (bench/load-fakes.ts),
 * default limits (the per-socket rate limit included: a senior's pace is far below it).
 * It also reports where agent turns spend their time (bench/load-probe.ts) and its CPU.
 *   argv: seniors firstTokenMs
 */
const seniors = Number(process.argv[2]);
const firstTokenMs = Number(process.argv[3]);
const stages = new AgentStageProbe();
const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', MISTRAL_API_KEY: 'bench-key', MISTRAL_BASE_URL: process.env.MISTRAL_BASE_URL! });
const rt = await startRuntime(config, { logger: createLogger('silent'), inspect: stages.inspect });
const pool = new PoolProbe(rt.db.pool);
const cpu = new CpuProbe();
const mainThread = new ThreadProbe(performance.eventLoopUtilization);
const dbThread = new ThreadProbe((since) => rt.db.thread!.performance.eventLoopUtilization(since));
await seedBenchSeniors(rt, seniors);
await grantAllConsents(rt);

const loop = monitorEventLoopDelay({ resolution: 2 });
process.send!({ type: 'ready', url: `${rt.url.replace('http', 'ws')}/v1/kiosk` });
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'reset') {
    loop.reset();
    loop.enable();
    stages.reset();
    pool.reset();
    cpu.reset();
    mainThread.reset();
    dbThread.reset();
    return process.send!({ type: 'reset' });
  }
  // Memory after full collections, asked only while no turn is in flight: three collections of this heap stall
  // the process for a few hundred ms, and at the window's end they delayed the window's last turns, which then
  // set the overhead p99.
  if (msg.type === 'memory') {
    for (let i = 0; i < 3; i++) global.gc?.();
    const { rss, heapUsed, external } = process.memoryUsage();
    return process.send!({ type: 'memory', rss, heapUsed, external, sessions: rt.registry.size });
  }
  if (msg.type !== 'measure') return;
  loop.disable();
  const loopP99Ms = loop.count > 0 ? loop.percentile(99) / 1e6 : NaN;
  const probes = { cpuPercent: cpu.share(), busy: { main: mainThread.busy(), database: dbThread.busy() }, stages: stages.figures(firstTokenMs), pool: pool.figures() };
  process.send!({ type: 'measure', loopP99Ms, ...probes });
});
process.on('SIGTERM', () => process.exit(0));

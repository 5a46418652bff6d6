import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { kiosk, subagent } from './support/sessions.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:deploy — how many close-time derivations a deploy loses. N live sessions of TURNS turns
 * each are closed by the runtime's SIGTERM path (`runtime.close()`: /ready 503, sessions closed,
 * the close-time queue drained, then the database closed), with the sub-agents answering after a
 * realistic Mistral Small latency. Each N runs twice in the same process: the previous shutdown
 * (pool of 2, 7 s drain) as the baseline, then the defaults (SHUTDOWN_DRAIN_CONCURRENCY,
 * SHUTDOWN_DRAIN_MS).
 *   npm run bench:deploy            (BENCH_SESSIONS=10,50,100 BENCH_TURNS=10 BENCH_LATENCY_MS=1500)
 */
const SESSIONS = (process.env.BENCH_SESSIONS ?? '10,50,100').split(',').map(Number);
const TURNS = Number(process.env.BENCH_TURNS ?? 10);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 1500);
const defaults = loadConfig({});
const POLICIES: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'before (pool 2, 7 s)', env: { SHUTDOWN_DRAIN_CONCURRENCY: '2', SHUTDOWN_DRAIN_MS: '7000' } },
  { name: `now (pool ${defaults.SHUTDOWN_DRAIN_CONCURRENCY}, ${defaults.SHUTDOWN_DRAIN_MS / 1000} s)`, env: {} },
];
const TOPICS = ['Ce matin j’ai arrosé les tomates', 'Ma fille m’a téléphoné hier soir', 'Il a plu toute la journée', 'J’ai mal dormi cette nuit', 'Bonjour'];

async function deploy(sessions: number, env: Record<string, string>) {
  const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://', ...env });
  const rt = await startRuntime(config, { logger: createLogger('silent'), subagentModel: subagent(LATENCY_MS) });
  const kiosks = [];
  for (let i = 0; i < sessions; i++) kiosks.push(await kiosk(rt));
  await Promise.all(kiosks.map(async (k) => {
    for (let t = 0; t < TURNS; t++) await k.turn(`${TOPICS[t % TOPICS.length]}, numéro ${t}`);
  }));
  const t0 = performance.now();
  await rt.close();
  const seconds = (performance.now() - t0) / 1000;
  const lost = (await rt.metrics.closeJobsLost.get()).values[0]?.value ?? 0;
  const done = (await rt.metrics.closeJobs.get()).values.reduce((n, v) => n + v.value, 0);
  for (const k of kiosks) k.ws.terminate();
  return { jobs: sessions * (TURNS + 2), done, lost, seconds };
}

console.log(`\nbench:deploy — N sessions × ${TURNS} turns closed by SIGTERM's path; sub-agent latency ${LATENCY_MS} ms; node ${process.version}\n`);
console.log('| sessions | jobs queued | shutdown | jobs finished | jobs lost | shutdown took | lost vs before |');
console.log('|---:|---:|---|---:|---:|---:|---:|');
const summary: string[] = [];
for (const n of SESSIONS) {
  const rows = [];
  for (const policy of POLICIES) rows.push({ policy, ...(await deploy(n, policy.env)) });
  const [before, now] = rows as [(typeof rows)[0], (typeof rows)[0]];
  for (const r of rows) {
    const ratio = r === now ? (before.lost === 0 ? '—' : `${(now.lost / before.lost).toFixed(2)}×`) : '';
    console.log(`| ${n} | ${r.jobs} | ${r.policy.name} | ${r.done} | ${r.lost} | ${r.seconds.toFixed(1)} s | ${ratio} |`);
  }
  summary.push(`${n} sessions: ${now.lost} lost (before: ${before.lost})`);
}
console.log(`\ndeploy: ${summary.join('; ')}`);

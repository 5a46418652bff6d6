import { loadavg } from 'node:os';
import pg from 'pg';
import { SeniorDirectory } from '../adapters/postgres/senior-directory.ts';
import { generateToken } from '../adapters/postgres/tokens.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';
import { within } from '../runtime/cli/mistral-check/waits.ts';
import { loadConfig } from '../runtime/config.ts';
import { KioskClient, type Frame } from '../test/support/kiosk-client.ts';
import { startWirePostgres } from '../test/support/pglite-server.ts';
import { runtimeProcessEnv, spawnRuntime, type RuntimeProcess } from '../test/support/runtime-process.ts';
import { percentile } from './support/stats.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:takeover — how long a senior's session takes to move from one runtime process to another on the
 * same database (the embedded one served over the wire), from the kiosk's `session.start` on the new
 * process to its `session.ready`:
 *   - baseline: a start of a senior no process holds, on the same process in the same run;
 *   - live: a takeover of a session another live process holds (it closes it and says so);
 *   - killed: a takeover of a session held by a process killed with -9 (the taking process waits
 *     TAKEOVER_ACK_MS for an answer that cannot come), the killed process started again after each.
 * The runtime processes run as `npm start` runs them (V8's defaults), TAKEOVER_ACK_MS at its default.
 * Rounds alternate baseline and live; medians and p90 reported, each against the baseline.
 *   npm run bench:takeover   (BENCH_ROUNDS, default 20; BENCH_KILLS, default 3)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const KILLS = Number(process.env.BENCH_KILLS ?? 3);
const ACK_MS = loadConfig({}).TAKEOVER_ACK_MS;
/** Any one wait of the bench: a start, a ready, a close, on a busy machine. */
const STEP_MS = 60_000;

/** `promise` within STEP_MS (the check's own bounded wait; nothing here aborts the run early). */
const step = <T>(promise: Promise<T>, what: string): Promise<T> => within(promise, STEP_MS, what, new AbortController().signal);

const db = await startWirePostgres();
const start = (): Promise<RuntimeProcess> => spawnRuntime(['runtime/main.ts'], { env: { PATH: process.env.PATH ?? '', ...runtimeProcessEnv(db.url) } });
// The first migrates the new database; the second finds it migrated.
let a = await start();
const b = await start();
const pool = new pg.Pool({ connectionString: db.url, max: 1 });
const directory = new SeniorDirectory(pool);

async function newSenior(): Promise<string> {
  const senior = await directory.createSenior({ displayName: 'Bench', preferredName: 'Bench', onboardingDone: true });
  const token = generateToken('kiosk');
  await directory.addDevice(senior, token);
  return token;
}

/** A kiosk of `token` on `p` with a live session. */
async function live(p: RuntimeProcess, token: string): Promise<KioskClient> {
  const kiosk = await step(KioskClient.connect(p.ws, token), 'connect');
  await step(kiosk.start(), 'session.ready');
  return kiosk;
}

/** From `session.start` on `p` to its `session.ready`, in ms; the session is then ended. */
async function timedStart(p: RuntimeProcess, token: string): Promise<number> {
  const kiosk = await step(KioskClient.connect(p.ws, token), 'connect');
  const began = performance.now();
  kiosk.send({ type: 'session.start' });
  await step(kiosk.next('session.ready'), 'session.ready');
  const ms = performance.now() - began;
  kiosk.send({ type: 'session.end' });
  await step(kiosk.next('session.closed'), 'session.closed');
  kiosk.close();
  return ms;
}

const samples = { baseline: [] as number[], live: [] as number[], killed: [] as number[] };
const loadBefore = loadavg()[0]!;
try {
  for (let round = 0; round < ROUNDS; round++) {
    samples.baseline.push(await timedStart(b, await newSenior()));
    const token = await newSenior();
    const old = await live(a, token);
    const replaced = old.next((f: Frame) => f.type === 'session.closed');
    samples.live.push(await timedStart(b, token));
    await step(replaced, 'the old session closed');
    old.close();
  }
  for (let kill = 0; kill < KILLS; kill++) {
    const token = await newSenior();
    const old = await live(a, token);
    a.child.kill('SIGKILL');
    await a.stop();
    old.close();
    samples.killed.push(await timedStart(b, token));
    a = await start();
  }
} finally {
  await pool.end();
  await Promise.all([a.stop(), b.stop()]);
  await db.stop();
}

const base = percentile(samples.baseline, 50);
const rows = Object.entries(samples).map(([name, xs]) => {
  const p50 = percentile(xs, 50);
  return `| ${name} | ${xs.length} | ${p50.toFixed(0)} | ${percentile(xs, 90).toFixed(0)} | ${Math.max(...xs).toFixed(0)} | **${(p50 / base).toFixed(2)}×** |`;
});
console.log(`bench:takeover — session.start → session.ready on a second runtime process, ${ROUNDS} rounds, ${KILLS} kills; TAKEOVER_ACK_MS ${ACK_MS}; node ${process.version}, load ${loadBefore.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end`);
console.log('\n| start | n | p50 ms | p90 ms | max ms | p50 / baseline p50 |\n|---|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);

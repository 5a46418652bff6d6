import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { migrate } from '../adapters/postgres/migrations.ts';
import { docComment, exitOnHelp } from '../runtime/cli/usage.ts';
import { openDatabase } from '../runtime/db/database.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime, type RuntimeOverrides } from '../runtime/runtime.ts';
import { writeMigratedImage } from '../test/support/database-image.ts';
import { LogCapture, TEST_RUNTIME_SKIPS, testRuntimeConfig } from '../test/support/runtime.ts';

exitOnHelp(() => docComment(import.meta.url));

/**
 * bench:test-start — what starting a test runtime costs, in wall time and CPU (every thread of the
 * process: the database's included), start then close:
 *   - baseline: the runtime as every test started it before, a new in-memory PGlite (initdb), every
 *     migration, the dream scheduler and the API docs (startRuntime's defaults);
 *   - image: the same from the migrated database image (test/support/database-image.ts);
 *   - image + skips: what startTestRuntime does now, the dream scheduler and API docs off too.
 * Beside them, the migrated database the integration tests open (test/support/database.ts): a new
 * one migrated, against one started from the image. The image is made once, its cost shown apart.
 * Rounds alternate the variants (BENCH_ROUNDS, default 5, after one warm-up round); medians reported.
 *   npm run bench:test-start
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Sample {
  wallMs: number;
  cpuMs: number;
}

interface Variant {
  name: string;
  /** Starts the thing and returns how to close it. */
  start(): Promise<() => Promise<void>>;
}

async function measure(variant: Variant): Promise<Sample> {
  const cpu = process.cpuUsage();
  const began = performance.now();
  const close = await variant.start();
  await close();
  const wallMs = performance.now() - began;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = await mkdtemp(path.join(tmpdir(), 'kohami-bench-image-'));
const image = path.join(dir, 'migrated.tar');
const made = performance.now();
await writeMigratedImage(image);
const imageMs = performance.now() - made;

const runtime = (name: string, overrides: RuntimeOverrides): Variant => ({
  name,
  start: async () => {
    const rt = await startRuntime(testRuntimeConfig(), { logger: createLogger('debug', new LogCapture()), ...overrides });
    return () => rt.close();
  },
});
const database = (name: string, pgliteImage: string | undefined): Variant => ({
  name,
  start: async () => {
    const db = await openDatabase({ pgliteDataDir: 'memory://', pgliteImage });
    await migrate(db.pool);
    return () => db.close();
  },
});
const groups: Variant[][] = [
  [runtime('baseline: initdb, migrations, dream scheduler, API docs', {}), runtime('image', { databaseImage: image }), runtime('image + skips (startTestRuntime)', { databaseImage: image, ...TEST_RUNTIME_SKIPS })],
  [database('baseline: initdb, migrations', undefined), database('image', image)],
];
const results = new Map(groups.flat().map((v) => [v, [] as Sample[]]));
const load = loadavg()[0]!.toFixed(2);
for (const v of groups.flat()) await measure(v);
for (let r = 0; r < ROUNDS; r += 1) for (const v of groups.flat()) results.get(v)!.push(await measure(v));
await rm(dir, { recursive: true, force: true });

console.log(`bench:test-start — a test runtime's and a test database's start + close, ${ROUNDS} rounds; node ${process.version}, load ${load} at the start, ${loadavg()[0]!.toFixed(2)} at the end`);
console.log(`the migrated image, made once per test run: ${imageMs.toFixed(0)} ms\n`);
console.log('| what | variant | wall ms | wall ratio | CPU ms | CPU ratio |');
console.log('|---|---|---:|---:|---:|---:|');
for (const [what, variants] of [['test runtime', groups[0]!], ['migrated database', groups[1]!]] as const) {
  const base = results.get(variants[0]!)!;
  const [baseWall, baseCpu] = [median(base.map((s) => s.wallMs)), median(base.map((s) => s.cpuMs))];
  for (const v of variants) {
    const samples = results.get(v)!;
    const [wall, cpu] = [median(samples.map((s) => s.wallMs)), median(samples.map((s) => s.cpuMs))];
    console.log(`| ${what} | ${v.name} | ${wall.toFixed(0)} | **${(wall / baseWall).toFixed(2)}×** | ${cpu.toFixed(0)} | **${(cpu / baseCpu).toFixed(2)}×** |`);
  }
}

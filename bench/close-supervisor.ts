import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate } from '../adapters/postgres/migrations.ts';
import { openDatabase } from '../runtime/db/database.ts';
import type { FakeMistral } from '../test/support/fake-mistral.ts';
import { npmStart } from '../test/support/npm-start.ts';
import { grantAllConsents, seedBenchSeniors } from './support/seed-seniors.ts';
import { kioskSession } from './support/sessions.ts';

export interface SupervisorStop {
  expectedMood: number;
  moodRows: number;
  /** From the group's SIGTERM to npm's exit, in seconds. */
  stopSeconds: number;
  /** npm's exit: its code, or the signal that ended it. */
  exit: number | string;
}

/**
 * bench:close's SIGTERM as a supervisor sends it: `npm start` in a process group of its own (a terminal,
 * systemd's control-group kill), on a fresh PGlite data directory seeded with one senior per session, its
 * sub-agents on `fake`. Session i starts at i × windowMs / sessions and has `turns` turns `gapMs` apart;
 * as the last one closes, at the runtime's next sub-agent call, the whole group gets SIGTERM — the runtime receives it from the group and again
 * from npm. The data directory is then reopened and its mood entries counted: one per turn is expected.
 */
export async function supervisorStop(fake: FakeMistral, shape: { sessions: number; turns: number; gapMs: number; windowMs: number; sentence: string }): Promise<SupervisorStop> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kohami-bench-close-'));
  const pgliteDataDir = path.join(dir, 'pglite');
  try {
    const seeding = await openDatabase({ pgliteDataDir });
    try {
      await migrate(seeding.pool);
      await seedBenchSeniors({ db: seeding }, shape.sessions);
      await grantAllConsents({ db: seeding });
    } finally {
      await seeding.close();
    }
    const npm = await npmStart({ KOHAMI_ENV: 'test', PORT: '0', LOG_LEVEL: 'error', PGLITE_DATA_DIR: pgliteDataDir, MISTRAL_API_KEY: 'bench-key', MISTRAL_BASE_URL: fake.baseUrl });
    let signalledAt = 0;
    try {
      await Promise.all(
        Array.from({ length: shape.sessions }, async (_, i) => {
          await new Promise((r) => setTimeout(r, (i * shape.windowMs) / shape.sessions));
          const k = await kioskSession(npm.url, `kiosk_bench_${i + 1}`);
          for (let t = 0; t < shape.turns; t++) {
            const took = await k.turn(`${shape.sentence} ${t}.`);
            if (t < shape.turns - 1) await new Promise((r) => setTimeout(r, Math.max(0, shape.gapMs - took)));
          }
          await k.end();
        }),
      );
      // The signal while the last session's derivations are in flight: at the next sub-agent call the runtime
      // sends (bounded: a runtime that sends none is signalled after 10 s).
      const sent = fake.requests.length;
      const deadline = performance.now() + 10_000;
      while (fake.requests.length === sent && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      signalledAt = performance.now();
      npm.signalGroup('SIGTERM');
      await npm.closed;
    } finally {
      if (npm.npm.exitCode === null && npm.npm.signalCode === null) npm.signalGroup('SIGKILL');
    }
    const stopSeconds = (performance.now() - signalledAt) / 1000;
    const reopened = await openDatabase({ pgliteDataDir });
    try {
      const moodRows = (await reopened.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM mood_scores')).rows[0]!.n;
      return { expectedMood: shape.sessions * shape.turns, moodRows, stopSeconds, exit: npm.npm.exitCode ?? String(npm.npm.signalCode) };
    } finally {
      await reopened.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

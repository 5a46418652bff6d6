import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgErasureNoticesRepository } from '../../adapters/postgres/pg-erasure-notices.repository.ts';
import { PgErasureRepository } from '../../adapters/postgres/pg-erasure.repository.ts';
import { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import { PgSignals } from '../../adapters/postgres/pg-signals.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { RemoteErasures, SeniorErasure, type ErasureAcrossProcesses } from '../../runtime/sessions/erasure.ts';
import { createSeniors, migratedDatabase } from '../support/database.ts';
import { testRegistry } from '../support/registry.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

const STALE_MS = 15_000;
const RETAIN_MS = 30_000;
/** Where A's erasure must wait B's session out: long enough for a loaded machine, short of STALE_MS's 15 s of waiting. */
const WAIT_STALE_MS = 3_000;

/**
 * One runtime process's erasure side, on the shared test database: its registry, its notices, a RAM
 * store of seniors. `staleMs` is how long it counts another process live, which also bounds how long
 * its erasure waits for another's session to close (that bound and one poll).
 */
function processOn(processId: string, pollMs: number, signals?: PgSignals, staleMs = STALE_MS) {
  const presence = new PgPresenceRepository(db.pool);
  const logger = createLogger('silent');
  const registry = testRegistry(presence, processId, STALE_MS, { logger });
  const cached = new Set<string>();
  const inMemory = { semantic_cache: { invalidateSenior: (id: string) => Number(cached.delete(id)) } };
  const across: ErasureAcrossProcesses = { notices: new PgErasureNoticesRepository(db.pool), presence, processId, staleMs, pollMs, retainMs: RETAIN_MS, logger, ...(signals ? { signals } : {}) };
  const remote = new RemoteErasures(across, registry, inMemory);
  registry.onBeat(() => remote.heartbeat());
  signals?.on((signal) => {
    if (signal.kind === 'erasure') remote.wake();
  });
  const erasure = new SeniorErasure(new PgErasureRepository(db.pool), {}, registry, inMemory, across);
  return { registry, remote, erasure, cached, presence };
}

describe('erasure notices (erasure_notices)', () => {
  it('are written only while another process is live, hold ids only, survive the sweep, skip their writer, and are pruned', async () => {
    const notices = new PgErasureNoticesRepository(db.pool);
    const [alone, shared] = await createSeniors(db, 2);
    const presence = new PgPresenceRepository(db.pool);
    await presence.heartbeat('n-writer', [], STALE_MS);
    expect(await notices.publish(alone!, 'n-writer', STALE_MS, RETAIN_MS)).toBe(false);

    await presence.heartbeat('n-reader', [], STALE_MS);
    expect(await notices.publish(shared!, 'n-writer', STALE_MS, RETAIN_MS)).toBe(true);
    const columns = await db.pool.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'erasure_notices' ORDER BY ordinal_position`,
    );
    expect(columns.rows.map((r) => r.column_name)).toEqual(['id', 'erased_senior', 'process_id', 'erased_at']);
    // The erasure's sweep (every table with a senior_id column) leaves the notice of its own erasure.
    await new PgErasureRepository(db.pool).eraseSenior(shared!);
    expect(await notices.recent('n-reader', RETAIN_MS)).toEqual([{ id: expect.any(String), seniorId: shared, processId: 'n-writer' }]);
    expect(await notices.recent('n-writer', RETAIN_MS)).toEqual([]);

    // Older than the retention (its age set in the database): not read any more, and pruned.
    await db.pool.query(`UPDATE erasure_notices SET erased_at = now() - interval '31 seconds' WHERE erased_senior = $1`, [shared]);
    expect(await notices.recent('n-reader', RETAIN_MS, true)).toEqual([]);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM erasure_notices WHERE erased_senior = $1', [shared])).rows[0].n).toBe(0);
    await presence.releaseProcess('n-writer');
    await presence.releaseProcess('n-reader');
  });

  it('a session whose presence row the sweep removed closes as erased at the heartbeat, not replaced, and the caches are purged', async () => {
    const [paul, other] = await createSeniors(db, 2);
    // B polls far less often than this test takes: only its heartbeat can see the notice. A counts B live
    // for WAIT_STALE_MS, not 15 s: B, whose session was claimed just before, is live when A publishes.
    const a = processOn('e-a', 20, undefined, WAIT_STALE_MS);
    const b = processOn('e-b', 600_000);
    const frames: ServerFrame[] = [];
    await b.registry.start(paul!, { send: (f) => frames.push(f) }, false);
    b.cached.add(paul!).add(other!);

    // A's wait for B's close runs out (WAIT_STALE_MS and one poll); the sweep then removes B's presence row.
    await a.erasure.erase(paul!);
    expect(b.registry.get(paul!)).toBeDefined();
    await b.registry.heartbeat(STALE_MS);
    expect(frames).toContainEqual({ type: 'session.closed', reason: 'erased' });
    expect(frames).not.toContainEqual({ type: 'session.closed', reason: 'replaced' });
    expect(b.registry.get(paul!)).toBeUndefined();
    expect([...b.cached]).toEqual([other]);
    for (const p of [a, b]) p.remote.stop();
    b.registry.closeAll('shutdown');
    await b.presence.releaseProcess('e-b');
  });

  it('with signals, the other process reads the notice at once: its session closes as erased with no poll and no heartbeat due', async () => {
    const [paul, other] = await createSeniors(db, 2);
    const logger = createLogger('silent');
    const signalsA = new PgSignals(db.pool, 's-a', logger);
    const signalsB = new PgSignals(db.pool, 's-b', logger);
    await Promise.all([signalsA.start(), signalsB.start()]);
    // B neither polls within this test nor beats after its first: only the signal can bring it the notice.
    // (A's poll sets how often its erasure looks whether B's session has closed.)
    const a = processOn('s-a', 20, signalsA);
    const b = processOn('s-b', 600_000, signalsB);
    await a.registry.heartbeat(STALE_MS);
    await b.registry.heartbeat(STALE_MS);
    const frames: ServerFrame[] = [];
    await b.registry.start(paul!, { send: (f) => frames.push(f) }, false);
    b.cached.add(paul!).add(other!);

    await a.erasure.erase(paul!);
    // Within A's wait (4 × 20 ms) on a quiet machine; later on a busy one, still before any poll or beat of B's.
    await expect.poll(() => frames).toContainEqual({ type: 'session.closed', reason: 'erased' });
    expect(b.registry.get(paul!)).toBeUndefined();
    expect([...b.cached]).toEqual([other]);
    for (const p of [a, b]) p.remote.stop();
    await Promise.all([signalsA.stop(), signalsB.stop()]);
    await a.presence.releaseProcess('s-a');
    await b.presence.releaseProcess('s-b');
  });
});

import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, POOL_WAIT_MS, type Database } from '../../runtime/db/database.ts';
import { startWirePostgres } from '../support/pglite-server.ts';

/** Checks out every connection of the pool, then asks for one more: it must be refused after POOL_WAIT_MS, not wait forever. */
async function exhaust(db: Database): Promise<void> {
  const max = (db.pool as pg.Pool & { options: { max: number } }).options.max;
  const held = await Promise.all(Array.from({ length: max }, () => db.pool.connect()));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const waiting = db.pool.connect();
  const outcome = waiting.then(
    () => 'connected',
    (err: Error) => err.message,
  );
  await vi.advanceTimersByTimeAsync(POOL_WAIT_MS - 1);
  expect(await Promise.race([outcome, Promise.resolve('still waiting')])).toBe('still waiting');
  await vi.advanceTimersByTimeAsync(1);
  expect(await outcome).toMatch(/timeout exceeded/);
  vi.useRealTimers();
  for (const client of held) client.release();
  // The pool is whole again: the next query is answered.
  expect((await db.pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
}

describe('a query waits for a database connection at most POOL_WAIT_MS', () => {
  let db: Database | undefined;
  let server: { url: string; stop(): Promise<void> } | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await db?.close();
    await server?.stop();
    db = undefined;
    server = undefined;
  });

  it('on the embedded database', async () => {
    db = await openDatabase({ pgliteDataDir: 'memory://' });
    await exhaust(db);
  });

  it('on a PostgreSQL server (the pg wire path)', async () => {
    server = await startWirePostgres();
    db = await openDatabase({ databaseUrl: server.url, pgliteDataDir: 'memory://' });
    await exhaust(db);
  });
});

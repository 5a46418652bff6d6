import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/db/database.ts';

/**
 * The embedded database's thread ends by itself at close: terminating it while V8 may still be
 * compiling PGlite's WebAssembly in the background crashed test processes with SIGTRAP. A terminated
 * thread exits with code 1, one that ended by itself with 0.
 */
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A first start runs initdb: on a busy machine that alone has taken over a minute. */
const START_TIMEOUT_MS = 300_000;

describe('closing the embedded database', () => {
  it('its thread ends by itself, not terminated, with a listening connection still open', { timeout: START_TIMEOUT_MS }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-close-'));
    dirs.push(dir);
    const db = await openDatabase({ pgliteDataDir: path.join(dir, 'pglite') });
    const exitCode = new Promise<number>((resolve) => db.thread!.once('exit', resolve));
    await db.pool.query('CREATE TABLE kept (n int)');
    await db.pool.query('INSERT INTO kept VALUES (1)');
    const listener = await db.pool.connect();
    await listener.query('LISTEN kohami_close_test');
    listener.release();
    await db.close();
    expect(await exitCode).toBe(0);

    // And cleanly: what was written is there at the next start.
    const reopened = await openDatabase({ pgliteDataDir: path.join(dir, 'pglite') });
    try {
      expect((await reopened.pool.query('SELECT n FROM kept')).rows).toEqual([{ n: 1 }]);
    } finally {
      await reopened.close();
    }
  });

  it('an in-memory database’s thread too', { timeout: START_TIMEOUT_MS }, async () => {
    const db = await openDatabase({ pgliteDataDir: 'memory://' });
    const exitCode = new Promise<number>((resolve) => db.thread!.once('exit', resolve));
    await db.pool.query('SELECT 1');
    await db.close();
    expect(await exitCode).toBe(0);
  });
});

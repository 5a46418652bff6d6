import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../runtime/db/database.ts';
import { startTestRuntime } from '../support/runtime.ts';

/**
 * Embedded PGlite's shared_buffers are resident in the runtime's own memory once touched (a first
 * start's initdb touches them all): the runtime starts them at PGLITE_SHARED_BUFFERS_MB, and a
 * data directory takes whatever its next start says (the setting is not written into it).
 */
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const sharedBuffers = async (pool: { query(sql: string): Promise<{ rows: { shared_buffers: string }[] }> }) => (await pool.query('SHOW shared_buffers')).rows[0]!.shared_buffers;

/** Each case starts PGlite (an initdb on a new directory): on a busy machine that alone has taken over a minute. */
const STARTS_TIMEOUT_MS = 300_000;

describe('embedded PGlite shared_buffers', () => {
  it('the runtime starts its database at PGLITE_SHARED_BUFFERS_MB', { timeout: STARTS_TIMEOUT_MS }, async () => {
    const rt = await startTestRuntime({}, { PGLITE_SHARED_BUFFERS_MB: '24' });
    try {
      expect(await sharedBuffers(rt.db.pool)).toBe('24MB');
    } finally {
      await rt.close();
    }
  });

  it('is 16 MB by default, not PostgreSQL’s 128 MB, and set at each start whatever an earlier one used', { timeout: STARTS_TIMEOUT_MS }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kohami-buffers-'));
    dirs.push(dir);
    const pgliteDataDir = path.join(dir, 'pglite');
    for (const [mb, expected] of [[undefined, '16MB'], [32, '32MB'], [undefined, '16MB']] as const) {
      const db = await openDatabase({ pgliteDataDir, ...(mb ? { pgliteSharedBuffersMb: mb } : {}) });
      try {
        expect(await sharedBuffers(db.pool)).toBe(expected);
      } finally {
        await db.close();
      }
    }
  });
});

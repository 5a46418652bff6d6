import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { createSenior, migratedDatabase } from '../support/database.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
let seniorId: string;
beforeAll(async () => {
  db = await migratedDatabase();
  seniorId = await createSenior(db, ['conversation']);
});
afterAll(() => db.close());

describe('PgConsentAdapter.hasConsent under a busy pool', () => {
  // One connection to the same database, held by "another turn": the check must wait for it.
  const onePool = () => new pg.Pool({ ...(db.pool as unknown as { options: pg.PoolConfig }).options, max: 1 });

  it('answers once a connection is free', async () => {
    const pool = onePool();
    try {
      const held = await pool.connect();
      const answer = new PgConsentAdapter(pool).hasConsent(seniorId, 'conversation', new AbortController().signal);
      held.release();
      await expect(answer).resolves.toBe(true);
      await expect(new PgConsentAdapter(pool).hasConsent(seniorId, 'contacts')).resolves.toBe(false);
    } finally {
      await pool.end();
    }
  });

  it('never runs the query of a turn that ended while it waited for a connection', async () => {
    const pool = onePool();
    try {
      const held = await pool.connect();
      const query = vi.spyOn(held, 'query');
      const turn = new AbortController();
      const answer = new PgConsentAdapter(pool).hasConsent(seniorId, 'conversation', turn.signal);
      turn.abort();
      // The only connection comes back: the waiting check gets it and must hand it back unused.
      held.release();
      await expect(answer).rejects.toMatchObject({ name: 'AbortError' });
      expect(query).not.toHaveBeenCalled();
      // The connection is healthy and free for the next turn.
      await expect(new PgConsentAdapter(pool).hasConsent(seniorId, 'conversation')).resolves.toBe(true);
    } finally {
      await pool.end();
    }
  });

  it('an already ended turn does not even ask for a connection', async () => {
    const pool = onePool();
    try {
      const connect = vi.spyOn(pool, 'connect');
      const turn = new AbortController();
      turn.abort();
      await expect(new PgConsentAdapter(pool).hasConsent(seniorId, 'conversation', turn.signal)).rejects.toMatchObject({ name: 'AbortError' });
      expect(connect).not.toHaveBeenCalled();
    } finally {
      await pool.end();
    }
  });
});

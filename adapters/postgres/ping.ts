import type pg from 'pg';

/** One round trip, nothing read: resolves once the database answers, rejects with why it did not. */
export async function ping(pool: pg.Pool): Promise<void> {
  await pool.query('SELECT 1');
}

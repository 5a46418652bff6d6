import type pg from 'pg';

/** What a repository needs to run its statements: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

/** Runs `work` on one client in a transaction opened by `begin`: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

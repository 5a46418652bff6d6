import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWirePostgres } from '../support/pglite-server.ts';

/**
 * LISTEN/NOTIFY across connections of the embedded database served over the wire protocol
 * (`runtime/db/pglite-worker.js`): one PGlite session behind every connection, so the server routes
 * each notification to the connections that listen on its channel, as PostgreSQL does.
 */
let wire: Awaited<ReturnType<typeof startWirePostgres>>;
const clients: pg.Client[] = [];

async function client(): Promise<{ c: pg.Client; got: string[] }> {
  const c = new pg.Client({ connectionString: wire.url });
  await c.connect();
  clients.push(c);
  const got: string[] = [];
  c.on('notification', (m) => got.push(`${m.channel}:${m.payload}`));
  return { c, got };
}

beforeAll(async () => {
  wire = await startWirePostgres();
});
afterAll(async () => {
  for (const c of clients) await c.end();
  await wire?.stop();
});

describe('LISTEN/NOTIFY over the wire on the embedded database', () => {
  it('reaches an idle listener on another connection, not the notifier that does not listen', async () => {
    const listener = await client();
    const notifier = await client();
    await listener.c.query('LISTEN kohami_a');
    await notifier.c.query(`SELECT pg_notify('kohami_a', 'one')`);
    // The listener sent nothing since: the notification came on its own.
    await expect.poll(() => listener.got).toEqual(['kohami_a:one']);
    await notifier.c.query('SELECT 1');
    expect(notifier.got).toEqual([]);
  });

  it('delivers at commit, to every listener of the channel and only them, extended-protocol LISTEN included', async () => {
    const one = await client();
    const two = await client();
    const other = await client();
    await one.c.query('LISTEN "Kohami_B"');
    await two.c.query({ text: 'listen "Kohami_B"', values: [] });
    await other.c.query('LISTEN kohami_c');
    const notifier = await client();
    await notifier.c.query('BEGIN');
    await notifier.c.query(`SELECT pg_notify('Kohami_B', $1)`, ['two']);
    // Inside the notifier's transaction nobody hears it yet.
    expect([one.got, two.got]).toEqual([[], []]);
    await notifier.c.query('COMMIT');
    await expect.poll(() => [one.got, two.got]).toEqual([['Kohami_B:two'], ['Kohami_B:two']]);
    await notifier.c.query(`SELECT pg_notify('kohami_c', 'three')`);
    await expect.poll(() => other.got).toEqual(['kohami_c:three']);
    expect(one.got).toEqual(['Kohami_B:two']);
  });

  it('an UNLISTEN of one connection leaves the others listening; a closed listener gets nothing and breaks nothing', async () => {
    const stays = await client();
    const leaves = await client();
    const gone = await client();
    for (const l of [stays, leaves, gone]) await l.c.query('LISTEN kohami_d');
    await leaves.c.query('UNLISTEN *');
    await gone.c.end();
    clients.splice(clients.indexOf(gone.c), 1);
    const notifier = await client();
    await notifier.c.query(`SELECT pg_notify('kohami_d', 'four')`);
    await expect.poll(() => stays.got).toEqual(['kohami_d:four']);
    await leaves.c.query('SELECT 1');
    expect(leaves.got).toEqual([]);
  });
});

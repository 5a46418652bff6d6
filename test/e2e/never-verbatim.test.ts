import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { startWirePostgres } from '../support/pglite-server.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const CANARY = 'zorglub-canari-4417';
const REPLY_CANARY = 'plumeau-canari-9902';

let wire: Awaited<ReturnType<typeof startWirePostgres>>;
let rt: TestRuntime;

beforeAll(async () => {
  wire = await startWirePostgres();
  // The DATABASE_URL path: the full runtime over the pg wire protocol.
  rt = await startTestRuntime({ agentModel: streamingModel([`Oui, ${REPLY_CANARY}.`]) }, { DATABASE_URL: wire.url });
});
afterAll(async () => {
  await rt.close();
  await wire.stop();
});

/** Every text-like column of every user table, searched for the canaries. */
async function tablesContaining(needle: string): Promise<string[]> {
  const cols = await rt.db.pool.query<{ table_schema: string; table_name: string; column_name: string }>(
    `SELECT table_schema, table_name, column_name FROM information_schema.columns
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
        AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED')`,
  );
  const hits: string[] = [];
  for (const c of cols.rows) {
    const q = `SELECT count(*)::int AS n FROM "${c.table_schema}"."${c.table_name}" WHERE "${c.column_name}"::text LIKE $1`;
    const res = await rt.db.pool.query<{ n: number }>(q, [`%${needle}%`]);
    if (res.rows[0]!.n > 0) hits.push(`${c.table_schema}.${c.table_name}.${c.column_name}`);
  }
  return hits;
}

describe('never verbatim (AC-06-A-62)', () => {
  it('a canary spoken in sessions is in no table and no log line once they close', async () => {
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    await kiosk.start();
    expect(await kiosk.turn('c1', `je vous confie le mot ${CANARY}`)).toMatchObject({ flux: 'agent' });
    expect(await kiosk.turn('c2', `bonjour ${CANARY}`)).toMatchObject({ flux: 'cache' });
    kiosk.send({ type: 'session.end' });
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'ended' });
    kiosk.close();

    expect(rt.logs.lines.length).toBeGreaterThan(3);
    expect(rt.logs.text).not.toContain(CANARY);
    expect(rt.logs.text).not.toContain(REPLY_CANARY);
    expect(await tablesContaining(CANARY)).toEqual([]);
    expect(await tablesContaining(REPLY_CANARY)).toEqual([]);
    // The search itself works: a value that is stored is found.
    expect(await tablesContaining('Marie')).toContain('public.seniors.preferred_name');
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';
import { KIOSK_TOKEN } from '../support/runtime.ts';
import { runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';

let wire: SharedDatabase;
let a: RuntimeProcess;
let b: RuntimeProcess;
let operator: string;
let db: pg.Pool;

const opsList = async (p: RuntimeProcess) =>
  ((await (await fetch(`${p.url}/v1/ops/sessions`, { headers: { authorization: `Bearer ${operator}` } })).json()) as {
    processId: string;
    sessions: Array<{ sessionId: string; processId: string; local: boolean; seniorId: string }>;
  });

beforeAll(async () => {
  wire = await sharedDatabase();
  a = await runtimeProcess(wire.url, { PRESENCE_HEARTBEAT_MS: '200' });
  b = await runtimeProcess(wire.url, { PRESENCE_HEARTBEAT_MS: '200' });
  db = new pg.Pool({ connectionString: wire.url, max: 1 });
  operator = generateToken('operator');
  await new SeniorDirectory(db).addApiToken('operator', operator, 'ops');
}, 90_000);
afterAll(async () => {
  for (const p of [a, b]) await p?.stop();
  await db?.end();
  await wire?.stop();
});

describe('two runtime processes on one database', () => {
  it('each lists the other’s live sessions (presence rows)', async () => {
    const kiosk = await KioskClient.connect(a.ws, KIOSK_TOKEN);
    const ready = await kiosk.start();
    const processA = (await opsList(a)).processId;
    expect(processA).not.toBe((await opsList(b)).processId);
    // Each lists the sessions of the processes whose heartbeat is fresh (3 beats): on a loaded machine a
    // 200 ms beat can run late, and that process's sessions are hidden until its next one.
    await expect.poll(async () => (await opsList(b)).sessions).toEqual([expect.objectContaining({ sessionId: ready.sessionId, processId: processA, local: false })]);
    await expect.poll(async () => (await opsList(a)).sessions).toEqual([expect.objectContaining({ sessionId: ready.sessionId, local: true })]);
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    kiosk.close();
    await expect.poll(async () => (await opsList(b)).sessions).toEqual([]);
  });

  it('a session started on the other process takes over: one live session per senior', async () => {
    const first = await KioskClient.connect(a.ws, KIOSK_TOKEN);
    await first.start();
    const second = await KioskClient.connect(b.ws, KIOSK_TOKEN);
    const taken = await second.start();
    expect(await first.next('session.closed')).toMatchObject({ reason: 'replaced' });
    await expect.poll(async () => (await opsList(a)).sessions).toEqual([expect.objectContaining({ sessionId: taken.sessionId, local: false })]);
    expect(await second.turn('t1', 'bonjour')).toMatchObject({ flux: 'cache' });
    first.close();
    second.send({ type: 'session.end' });
    await second.next('session.closed');
    second.close();
  });

  it('an operator closes, through one process, a session living in the other', async () => {
    const kiosk = await KioskClient.connect(b.ws, KIOSK_TOKEN);
    const ready = await kiosk.start();
    const res = await fetch(`${a.url}/v1/ops/sessions/${ready.sessionId}/close`, { method: 'POST', headers: { authorization: `Bearer ${operator}` } });
    expect(res.status).toBe(202);
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'operator' });
    kiosk.close();
  });

  it('two simultaneous starts for one senior on both processes leave exactly one live session', async () => {
    const [x, y] = await Promise.all([KioskClient.connect(a.ws, KIOSK_TOKEN), KioskClient.connect(b.ws, KIOSK_TOKEN)]);
    const [rx, ry] = await Promise.all([x.start(), y.start()]);
    const rows = await db.query<{ session_id: string }>('SELECT session_id FROM session_presence WHERE senior_id = $1', [rx.seniorId]);
    expect(rows.rows).toHaveLength(1);
    const survivor = rows.rows[0]!.session_id;
    const loser = survivor === rx.sessionId ? y : x;
    const winner = survivor === rx.sessionId ? x : y;
    expect([rx.sessionId, ry.sessionId]).toContain(survivor);
    expect(await loser.next('session.closed')).toMatchObject({ reason: 'replaced' });
    expect(await winner.turn('w1', 'salut')).toMatchObject({ flux: 'cache' });
    x.close();
    y.close();
  });
});

import { once } from 'node:events';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { seniorTables } from '../../adapters/postgres/pg-erasure.repository.ts';
import { EXPORT_BATCH_ROWS } from '../../runtime/http/admin/export-stream.ts';
import { ADMIN_TOKEN, adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The senior export, streamed (issue 33, item 2): real server, real PGlite, real sockets. One export
 * at a time and one waiting, so the bound is reached with three requests.
 */
const EXPORT_QUEUE_WAIT_MS = 60_000;
let rt: TestRuntime;
let api: ReturnType<typeof adminApi>;
let small: string;
let large: string;
/** Enough rows that the document (about 23 MB) cannot all sit in the sockets' buffers. */
const LARGE_ROWS = 20_000;
/** A mood row added mid-export, recorded now: after every other row of the senior (January 2026) in the order the export reads them. */
const LAST_ID = 'ffffffff-ffff-4fff-bfff-ffffffffffff';

/** A senior with LARGE_ROWS mood rows of January 2026, each with a ~1,000-character summary. */
async function largeSenior(runtime: TestRuntime): Promise<string> {
  const id = await runtime.directory.createSenior({ displayName: 'Lucien' });
  await runtime.db.pool.query(
    `INSERT INTO mood_scores (senior_id, score, tier, source, summary, recorded_at)
     SELECT $1, 50, 'neutre', 'per_turn', repeat('Lucien a parlé de son jardin. ', 33), '2026-01-01'::timestamptz + i * interval '1 minute'
       FROM generate_series(1, $2::int) i`,
    [id, LARGE_ROWS],
  );
  return id;
}

beforeAll(async () => {
  rt = await startTestRuntime({}, { EXPORT_CONCURRENCY: '1', EXPORT_QUEUE: '1', EXPORT_QUEUE_WAIT_MS: String(EXPORT_QUEUE_WAIT_MS) });
  api = adminApi(rt);
  small = await rt.directory.createSenior({ displayName: 'Suzanne', preferredName: 'Suzon' });
  for (const c of ['conversation', 'profil', 'sante'] as const) await rt.consents.grant(small, c);
  await rt.directory.addDevice(small, generateToken('kiosk'));
  await rt.directory.linkCaregiver(await rt.directory.addApiToken('caregiver', generateToken('caregiver'), 'fille de Suzanne'), small);
  await rt.memory.memory.persist({ seniorId: small, content: 'Elle joue du piano le soir.', category: 'profil' });
  await rt.memory.memory.persist({ seniorId: small, content: 'Elle prend un traitement pour le cœur.', category: 'sante' });
  // Exactly two batches: the second one full, so the third read finds nothing.
  await rt.db.pool.query(
    `INSERT INTO mood_scores (senior_id, score, tier, source, summary, recorded_at)
     SELECT $1, 40 + i % 50, 'neutre', 'per_turn', 'Suzanne a parlé de « musique » n°' || i || E' — \\\\ "guillemets" \\n ligne', '2026-11-01'::timestamptz + i * interval '1 minute'
       FROM generate_series(1, $2::int) i`,
    [small, 2 * EXPORT_BATCH_ROWS],
  );
  await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, 'Une séance sur le piano.', now(), now(), 5)`, [small]);
  expect((await api('PUT', `/v1/admin/seniors/${small}/profile`, { interlocutor: { interests: ['piano'] } })).status).toBe(200);

  large = await largeSenior(rt);
}, 120_000);
afterAll(() => rt.close());

/** A GET of the export over a plain socket, so the test decides when it reads. */
async function openExport(id: string): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  const req = http.get(`${rt.url}/v1/admin/seniors/${id}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const [res] = (await once(req, 'response')) as [http.IncomingMessage];
  return { req, res };
}

/** The body, read to its end. */
async function readAll(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves with the first chunk of the body, and leaves the rest unread. */
function firstChunk(res: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) =>
    // Paused in the listener itself: a flowing stream emits its next chunks before a promise settles.
    res.once('data', (chunk: Buffer) => {
      res.pause();
      resolve(chunk);
    }),
  );
}

interface ExportLog {
  msg: string;
  seniorId?: string;
  outcome?: string;
  rows?: number;
}
const logged = (msg: string, seniorId: string) => rt.logs.lines.map((l) => JSON.parse(l) as ExportLog).filter((l) => l.msg === msg && l.seniorId === seniorId);

describe('GET /v1/admin/seniors/:id/export, streamed', () => {
  it('holds what the whole-document export held: the senior row and every row of every table, less the omitted columns', async () => {
    const { res } = await openExport(small);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const doc = JSON.parse(await readAll(res)) as { seniorId: string; senior: unknown; tables: Record<string, unknown[]>; omitted: Record<string, string[]> };

    // What the export held before it streamed: one read of every table, rows as to_jsonb less the omitted columns.
    const q = <T,>(sql: string, params: unknown[]) => rt.db.pool.query<T & Record<string, unknown>>(sql, params);
    const expected: Record<string, string[]> = {};
    for (const table of await seniorTables(rt.db.pool)) {
      const rows = await q<{ row: unknown }>(`SELECT to_jsonb(t) - $2::text[] AS row FROM "${table}" t WHERE senior_id = $1`, [small, doc.omitted[table] ?? []]);
      expected[table] = rows.rows.map((r) => JSON.stringify(r.row)).sort();
    }
    const senior = (await q<{ row: unknown }>('SELECT to_jsonb(s) AS row FROM seniors s WHERE id = $1', [small])).rows[0]!.row;
    expect(doc.seniorId).toBe(small);
    expect(doc.senior).toEqual(senior);
    expect(doc.omitted).toEqual({ devices: ['token_hash'], memory_facts: ['embedding'], segments: ['embedding'] });
    expect(Object.keys(doc.tables).sort()).toEqual(Object.keys(expected).sort());
    for (const [table, rows] of Object.entries(expected)) expect(doc.tables[table]!.map((r) => JSON.stringify(r)).sort(), table).toEqual(rows);
    expect(doc.tables.mood_scores).toHaveLength(2 * EXPORT_BATCH_ROWS);
    expect(doc.tables.memory_facts).toHaveLength(2);
  });

  it('writes its first bytes before it has read its last row: a row added meanwhile, keyed last, is in the document', async () => {
    const { res } = await openExport(large);
    expect(res.statusCode).toBe(200);
    const first = await firstChunk(res);
    expect(first.toString('utf8')).toMatch(new RegExp(`^\\{"seniorId":"${large}"`));
    // The export waits for this client to read; a document built whole before its first byte could not hold this row.
    await rt.db.pool.query(`INSERT INTO mood_scores (id, senior_id, score, tier, source, summary) VALUES ($2, $1, 90, 'enjoue', 'per_turn', 'Ajoutée pendant l’export.')`, [large, LAST_ID]);
    res.resume();
    const doc = JSON.parse(first.toString('utf8') + (await readAll(res))) as { tables: { mood_scores: Array<{ id: string; summary: string }> } };
    expect(doc.tables.mood_scores).toHaveLength(LARGE_ROWS + 1);
    expect(doc.tables.mood_scores.at(-1)).toMatchObject({ id: LAST_ID, summary: 'Ajoutée pendant l’export.' });
    await expect.poll(() => logged('senior export ended', large).at(-1)).toMatchObject({ outcome: 'complete', rows: LARGE_ROWS + 1 });
  }, 120_000);

  it('runs EXPORT_CONCURRENCY at once and queues EXPORT_QUEUE; one more is told 503 with Retry-After, at once', async () => {
    const a = await openExport(large);
    const first = await firstChunk(a.res);
    const waiting = logged('senior export waiting for its turn', small).length;
    const b = openExport(small);
    await expect.poll(() => logged('senior export waiting for its turn', small).length).toBe(waiting + 1);

    const refused = await fetch(`${rt.url}/v1/admin/seniors/${small}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({ error: 'export_busy', message: '1 exports are running and 1 waiting: retry later' });

    // The running one finishes, whole; the queued one then gets its turn.
    a.res.resume();
    expect(JSON.parse(first.toString('utf8') + (await readAll(a.res))).seniorId).toBe(large);
    const queued = await b;
    expect(queued.res.statusCode).toBe(200);
    expect(JSON.parse(await readAll(queued.res)).tables.mood_scores).toHaveLength(2 * EXPORT_BATCH_ROWS);
  }, 120_000);

  it('a client that leaves mid-export stops its reads and frees its turn', async () => {
    const { req, res } = await openExport(large);
    await firstChunk(res);
    req.destroy();
    await expect.poll(() => logged('senior export ended', large).at(-1)?.outcome, { timeout: 30_000 }).toBe('client_gone');
    expect(logged('senior export ended', large).at(-1)!.rows).toBeLessThan(LARGE_ROWS);
    // Its turn is free: with one export at a time, the next one runs at once.
    const next = await api('GET', `/v1/admin/seniors/${small}/export`);
    expect(next.status).toBe(200);
  }, 120_000);
});

describe('GET /v1/admin/seniors/:id/export, a client that stops reading', () => {
  const STALL_MS = 1_000;
  let stalled: TestRuntime;

  beforeAll(async () => {
    stalled = await startTestRuntime({}, { EXPORT_STALL_MS: String(STALL_MS) });
  }, 120_000);
  afterAll(() => stalled.close());

  it('is cut after EXPORT_STALL_MS: its reads stop and its connection closes', async () => {
    const id = await largeSenior(stalled);
    const req = http.get(`${stalled.url}/v1/admin/seniors/${id}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    await firstChunk(res);
    // Not read again: the socket's buffers fill, the export waits for a drain that does not come.
    const ended = () =>
      stalled.logs.lines.map((l) => JSON.parse(l) as ExportLog).find((l) => l.msg === 'senior export ended' && l.seniorId === id);
    await expect.poll(ended, { timeout: 60_000 }).toMatchObject({ outcome: 'stalled' });
    expect(ended()!.rows).toBeLessThan(LARGE_ROWS);
    // What the sockets still held arrives, then the connection's end, before the document's.
    const failed = new Promise<Error>((resolve) => res.once('error', resolve));
    res.resume();
    expect((await failed).message).toBe('aborted');
    expect(res.complete).toBe(false);
  }, 120_000);
});

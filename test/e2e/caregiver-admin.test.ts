import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken, hashToken } from '../../adapters/postgres/tokens.ts';
import { adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The back office's caregivers over HTTP, on the real runtime: a caregiver created, linked and
 * unlinked, its token rotated and revoked — each checked by what that token may then read
 * (INV-P05) — and the routes refused to every role but admin, and to bad input.
 */

let rt: TestRuntime;
let api: ReturnType<typeof adminApi>;
let rose: string;
let paul: string;
/** Every token these tests were answered or made: none may reach the log. */
const issued: string[] = [];

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const timeline = (senior: string, token: string) => api('GET', `/v1/admin/seniors/${senior}/mood-timeline`, undefined, token);

async function createCaregiver(label: string): Promise<{ id: string; token: string }> {
  const res = await api('POST', '/v1/admin/caregivers', { label });
  expect(res.status).toBe(201);
  issued.push(res.body.token);
  return { id: res.body.id, token: res.body.token };
}

const listed = async (id: string) => (await api('GET', '/v1/admin/caregivers')).body.data.find((c: { id: string }) => c.id === id);

beforeAll(async () => {
  rt = await startTestRuntime();
  api = adminApi(rt);
  rose = await rt.directory.createSenior({ displayName: 'Rose Martin' });
  paul = await rt.directory.createSenior({ displayName: 'Paul Bernard' });
}, 60_000);
afterAll(async () => {
  await rt?.close();
});

describe('caregivers over the admin API', () => {
  it('a caregiver created and linked reads its senior, and only that one; its token is stored hashed', async () => {
    const res = await api('POST', '/v1/admin/caregivers', { label: '  Claire (fille de Rose)  ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), label: 'Claire (fille de Rose)', token: expect.stringMatching(/^caregiver_[\w-]{32}$/) });
    const { id, token } = res.body as { id: string; token: string };
    issued.push(token);
    const stored = await rt.db.pool.query('SELECT token_hash, role FROM api_tokens WHERE id = $1', [id]);
    expect(stored.rows).toEqual([{ token_hash: hashToken(token), role: 'caregiver' }]);

    expect((await timeline(rose, token)).status).toBe(403);
    const link = await api('PUT', `/v1/admin/caregivers/${id}/seniors/${rose}`);
    expect(link).toEqual({ status: 200, body: { caregiverId: id, seniorId: rose, linked: true } });
    expect((await api('PUT', `/v1/admin/caregivers/${id}/seniors/${rose}`)).status).toBe(200);

    expect(await timeline(rose, token)).toMatchObject({ status: 200, body: { seniorId: rose } });
    expect(await timeline(paul, token)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect(await listed(id)).toEqual({ id, label: 'Claire (fille de Rose)', createdAt: expect.any(String), tokenActive: true, seniorIds: [rose] });
    expect(Number.isNaN(Date.parse((await listed(id)).createdAt))).toBe(false);
  });

  it('rotation: the new token works at once, the old one is refused, the links stay', async () => {
    const { id, token: old } = await createCaregiver('Marc (fils de Paul)');
    await api('PUT', `/v1/admin/caregivers/${id}/seniors/${paul}`);
    expect((await timeline(paul, old)).status).toBe(200);

    const res = await api('POST', `/v1/admin/caregivers/${id}/token`);
    expect(res).toEqual({ status: 201, body: { id, token: expect.stringMatching(/^caregiver_/) } });
    const fresh = res.body.token as string;
    issued.push(fresh);
    expect(fresh).not.toBe(old);
    expect(await timeline(paul, old)).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect((await timeline(paul, fresh)).status).toBe(200);
    expect(await listed(id)).toMatchObject({ tokenActive: true, seniorIds: [paul] });
  });

  it('revocation: the token is refused, the caregiver and its links stay, and a new token can be issued', async () => {
    const { id, token } = await createCaregiver('Léa (petite-fille de Rose)');
    await api('PUT', `/v1/admin/caregivers/${id}/seniors/${rose}`);
    await api('PUT', `/v1/admin/caregivers/${id}/seniors/${paul}`);

    expect(await api('DELETE', `/v1/admin/caregivers/${id}/token`)).toEqual({ status: 200, body: { id, tokenActive: false } });
    expect((await timeline(rose, token)).status).toBe(401);
    expect(await listed(id)).toMatchObject({ tokenActive: false, seniorIds: [rose, paul].sort() });
    const revoked = await rt.db.pool.query('SELECT token_hash, revoked_at FROM api_tokens WHERE id = $1', [id]);
    expect(revoked.rows[0]).toEqual({ token_hash: null, revoked_at: expect.any(Date) });
    // Revoking again is no error, and keeps the first revocation's time.
    expect((await api('DELETE', `/v1/admin/caregivers/${id}/token`)).status).toBe(200);
    expect((await rt.db.pool.query('SELECT revoked_at FROM api_tokens WHERE id = $1', [id])).rows[0].revoked_at).toEqual(revoked.rows[0].revoked_at);

    const again = await api('POST', `/v1/admin/caregivers/${id}/token`);
    expect(again.status).toBe(201);
    issued.push(again.body.token);
    expect((await timeline(rose, again.body.token)).status).toBe(200);
    expect((await timeline(paul, again.body.token)).status).toBe(200);
    expect((await timeline(rose, token)).status).toBe(401);
    expect(await listed(id)).toMatchObject({ tokenActive: true });
  });

  it('unlinking: the caregiver is refused that senior at once; unlinking again is a 404', async () => {
    const { id, token } = await createCaregiver('Hugo (voisin de Rose)');
    await api('PUT', `/v1/admin/caregivers/${id}/seniors/${rose}`);
    expect((await timeline(rose, token)).status).toBe(200);

    expect(await api('DELETE', `/v1/admin/caregivers/${id}/seniors/${rose}`)).toEqual({ status: 200, body: { caregiverId: id, seniorId: rose, linked: false } });
    expect((await timeline(rose, token)).status).toBe(403);
    expect(await listed(id)).toMatchObject({ tokenActive: true, seniorIds: [] });
    expect(await api('DELETE', `/v1/admin/caregivers/${id}/seniors/${rose}`)).toEqual({
      status: 404,
      body: { error: 'not_found', message: 'this caregiver is not linked to that senior' },
    });
  });

  it('an unknown caregiver, a token row of another role, or an unknown senior: 404 naming which', async () => {
    const { id } = await createCaregiver('Inès (aide à domicile)');
    const operatorToken = generateToken('operator');
    issued.push(operatorToken);
    const operatorId = await rt.directory.addApiToken('operator', operatorToken, 'standard');
    const noCaregiver = { status: 404, body: { error: 'not_found', message: 'no such caregiver' } };
    for (const other of [UNKNOWN, operatorId]) {
      expect(await api('POST', `/v1/admin/caregivers/${other}/token`)).toEqual(noCaregiver);
      expect(await api('DELETE', `/v1/admin/caregivers/${other}/token`)).toEqual(noCaregiver);
      expect(await api('PUT', `/v1/admin/caregivers/${other}/seniors/${rose}`)).toEqual(noCaregiver);
      expect(await api('DELETE', `/v1/admin/caregivers/${other}/seniors/${rose}`)).toEqual(noCaregiver);
    }
    // The operator's token was neither rotated nor revoked by those calls.
    expect((await api('GET', '/v1/ops/sessions', undefined, operatorToken)).status).toBe(200);
    const noSenior = { status: 404, body: { error: 'not_found', message: 'no such senior' } };
    expect(await api('PUT', `/v1/admin/caregivers/${id}/seniors/${UNKNOWN}`)).toEqual(noSenior);
    expect(await api('DELETE', `/v1/admin/caregivers/${id}/seniors/${UNKNOWN}`)).toEqual(noSenior);
    expect((await api('GET', '/v1/admin/caregivers')).body.data.map((c: { id: string }) => c.id)).not.toContain(operatorId);
  });

  it('admin only: 401 without a token or with an unknown one, 403 for an operator or a caregiver', async () => {
    const caregiver = await createCaregiver('Nadia (fille de Paul)');
    await api('PUT', `/v1/admin/caregivers/${caregiver.id}/seniors/${paul}`);
    const operatorToken = generateToken('operator');
    issued.push(operatorToken);
    await rt.directory.addApiToken('operator', operatorToken, 'standard 2');
    const calls: Array<[string, string, unknown?]> = [
      ['POST', '/v1/admin/caregivers', { label: 'X' }],
      ['GET', '/v1/admin/caregivers'],
      ['POST', `/v1/admin/caregivers/${caregiver.id}/token`],
      ['DELETE', `/v1/admin/caregivers/${caregiver.id}/token`],
      ['PUT', `/v1/admin/caregivers/${caregiver.id}/seniors/${rose}`],
      ['DELETE', `/v1/admin/caregivers/${caregiver.id}/seniors/${paul}`],
    ];
    for (const [method, path, body] of calls) {
      expect(await api(method, path, body, null), `${method} ${path}`).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
      expect((await api(method, path, body, generateToken('admin'))).status, `${method} ${path}`).toBe(401);
      for (const token of [operatorToken, caregiver.token]) {
        expect(await api(method, path, body, token), `${method} ${path}`).toMatchObject({ status: 403, body: { error: 'forbidden', message: expect.stringContaining('requires role admin') } });
      }
    }
    // Nothing was done by the refused calls: the caregiver keeps its token and its one link.
    expect((await timeline(paul, caregiver.token)).status).toBe(200);
    expect((await timeline(rose, caregiver.token)).status).toBe(403);
    expect((await api('GET', '/v1/admin/caregivers')).body.data.map((c: { label: string }) => c.label)).not.toContain('X');
  });

  it.each([
    ['POST', '/v1/admin/caregivers', undefined, /^body .*expected a JSON object with a label/],
    ['POST', '/v1/admin/caregivers', [], /^body .*expected a JSON object with a label/],
    ['POST', '/v1/admin/caregivers', {}, /^body label: label must be a string/],
    ['POST', '/v1/admin/caregivers', { label: '   ' }, /label must not be empty/],
    ['POST', '/v1/admin/caregivers', { label: 42 }, /label must be a string/],
    ['POST', '/v1/admin/caregivers', { label: 'x'.repeat(201) }, /label must be at most 200 characters/],
    ['POST', '/v1/admin/caregivers/not-a-uuid/token', undefined, /caregiver id must be a UUID/],
    ['DELETE', '/v1/admin/caregivers/not-a-uuid/token', undefined, /caregiver id must be a UUID/],
    ['PUT', `/v1/admin/caregivers/not-a-uuid/seniors/${UNKNOWN}`, undefined, /caregiver id must be a UUID/],
    ['PUT', `/v1/admin/caregivers/${UNKNOWN}/seniors/not-a-uuid`, undefined, /senior id must be a UUID/],
    ['DELETE', `/v1/admin/caregivers/${UNKNOWN}/seniors/not-a-uuid`, undefined, /senior id must be a UUID/],
  ])('%s %s %j → 400 with a clear message', async (method, path, body, message) => {
    const res = await api(method, path, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(message) });
  });

  it('no token issued or used here ever reached the log', () => {
    expect(issued.length).toBeGreaterThan(8);
    const log = rt.logs.text;
    // The log is there, with these routes' requests in it.
    expect(log).toContain('/v1/admin/caregivers');
    for (const token of issued) expect(log).not.toContain(token.slice(token.indexOf('_') + 1));
  });
});

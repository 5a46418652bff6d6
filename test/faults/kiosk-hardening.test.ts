import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KioskClient } from '../support/kiosk-client.ts';
import { hangingModel, switchableModel, streamingModel } from '../support/models.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * Issue 20, item 12: cross-origin browser upgrades, tokens in URLs, what a failed start logs, ill-formed
 * turnIds, and a turn in flight at shutdown.
 */
const agent = switchableModel(streamingModel(['Je vous écoute.']));
let rt: TestRuntime;
let opsUrl: string;
const open: KioskClient[] = [];

/** A socket with exactly these headers, plus `Authorization: Bearer` when a token is given (null: none). */
async function kiosk(url = rt.wsUrl, token: string | null = KIOSK_TOKEN, headers: Record<string, string> = {}): Promise<KioskClient> {
  const client = await KioskClient.connect(url, undefined, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  open.push(client);
  return client;
}

beforeAll(async () => {
  // No grace at shutdown: the turn in flight below ends at once with the SOS line.
  rt = await startTestRuntime({ agentModel: agent }, { SHUTDOWN_TURN_GRACE_MS: '0' });
  opsUrl = `${rt.url.replace('http', 'ws')}/v1/ops/stream`;
});
afterAll(async () => {
  for (const c of open) c.close();
  await rt.close();
});

describe('a cross-origin browser upgrade is refused', () => {
  it('on the kiosk socket: 403 for another origin (even with a valid token); its own origin and no origin open', async () => {
    await expect(kiosk(rt.wsUrl, KIOSK_TOKEN, { origin: 'http://evil.example' })).rejects.toMatchObject({ statusCode: 403 });
    await expect(kiosk(rt.wsUrl, KIOSK_TOKEN, { origin: 'null' })).rejects.toMatchObject({ statusCode: 403 });
    const own = new URL(rt.url).origin;
    expect(await (await kiosk(rt.wsUrl, KIOSK_TOKEN, { origin: own })).start()).toMatchObject({ type: 'session.ready' });
    expect(await (await kiosk()).start()).toMatchObject({ type: 'session.ready' });
  });

  it('on the ops stream: 403 for another origin; the console’s own origin gets its hello', async () => {
    await expect(kiosk(`${opsUrl}?token=${ADMIN_TOKEN}`, null, { origin: 'http://evil.example' })).rejects.toMatchObject({ statusCode: 403 });
    const own = await kiosk(`${opsUrl}?token=${ADMIN_TOKEN}`, null, { origin: new URL(rt.url).origin });
    expect(await own.next('hello')).toMatchObject({ type: 'hello' });
  });
});

describe('?token= is accepted only where a client cannot set headers', () => {
  it('refused on /metrics and the admin API; the Authorization header works there', async () => {
    expect((await fetch(`${rt.url}/metrics?token=${ADMIN_TOKEN}`)).status).toBe(401);
    const refused = await fetch(`${rt.url}/v1/admin/seniors/${rt.seed!.seniorId}/consents?token=${ADMIN_TOKEN}`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toContain('Authorization');
    expect((await fetch(`${rt.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${rt.url}/v1/admin/seniors/${rt.seed!.seniorId}/consents`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(200);
  });

  it('kept on the kiosk upgrade and the ops stream upgrade (the kiosk page and the console)', async () => {
    expect(await (await kiosk(`${rt.wsUrl}?token=${KIOSK_TOKEN}`, null)).start()).toMatchObject({ type: 'session.ready' });
    expect(await (await kiosk(`${opsUrl}?token=${ADMIN_TOKEN}`, null)).next('hello')).toMatchObject({ type: 'hello' });
  });
});

describe('a turnId that is not well-formed Unicode', () => {
  it('is refused with invalid_frame, and nothing is answered under another id', async () => {
    const k = await kiosk();
    await k.start();
    // JSON.stringify writes a lone surrogate as the escape \ud800: the server parses it back as one.
    k.send(JSON.stringify({ type: 'turn', turnId: 'a\ud800', transcript: 'bonjour' }));
    const error = await k.next('error');
    expect(error).toMatchObject({ code: 'invalid_frame', message: expect.stringContaining('well-formed') });
    expect(error.turnId).toBeUndefined();
    k.send(JSON.stringify({ type: 'interrupt', turnId: '\udc00' }));
    expect(await k.next('error')).toMatchObject({ code: 'invalid_frame' });
    expect(await k.turn('ok', 'bonjour')).toMatchObject({ turnId: 'ok' });
    expect(k.frames.filter((f) => f.type === 'reply.done').map((f) => f.turnId)).toEqual(['ok']);
  });
});

describe('a session start that fails on the database', () => {
  it('logs the step and the error’s class and SQLSTATE (never its message, never a token), and closes 1011', async () => {
    const k = await kiosk();
    await rt.db.pool.query('ALTER TABLE personas RENAME TO personas_away');
    const logged = rt.logs.lines.length;
    try {
      k.send({ type: 'session.start' });
      expect(await k.closed).toBe(1011);
    } finally {
      await rt.db.pool.query('ALTER TABLE personas_away RENAME TO personas');
    }
    const lines = rt.logs.lines.slice(logged);
    const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'session start failed');
    expect(failed).toMatchObject({ step: 'load_profile', failure: { class: 'DatabaseError', sqlstate: '42P01', severity: 'ERROR' } });
    expect(JSON.stringify(failed)).not.toContain('personas');
    expect(lines.join('')).not.toContain(KIOSK_TOKEN);
  });
});

// Last: it shuts the file's runtime down.
describe('a turn in flight at shutdown', () => {
  it('ends with the SOS line (reason shutdown) before session.closed, never with an empty reply.done', async () => {
    const model = hangingModel();
    agent.use(model);
    const k = await kiosk();
    await k.start();
    k.send({ type: 'turn', turnId: 'late', transcript: 'raconte-moi ta journée' });
    await new Promise<void>((resolve) => {
      const check = () => (model.doStreamCalls.length > 0 ? resolve() : setImmediate(check));
      check();
    });
    rt.registry.shutdown();
    expect(await k.next('reply.done')).toMatchObject({ turnId: 'late', flux: 'sos', reason: 'shutdown', text: 'Bien sûr, je vous écoute.' });
    expect(await k.next('session.closed')).toEqual({ type: 'session.closed', reason: 'shutdown' });
  });
});

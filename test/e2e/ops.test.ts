import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { OPS_STREAM_TOO_SLOW } from '../../runtime/ops/ops-routes.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { hangingModel, streamingModel, switchableModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const CANARY = 'girafe-canari-3318';
/** One agent model for the file's runtime; each test swaps its behaviour. */
const agent = switchableModel(streamingModel([`Oui ${CANARY}.`]));
let rt: TestRuntime;
let operator: string;
let caregiver: string;

async function get(path: string, token: string | null = operator) {
  const res = await fetch(`${rt.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, text: await res.text() };
}

/** An operator's live feed, as the console opens it (token in the query string). */
async function opsStream(token = operator): Promise<KioskClient> {
  return KioskClient.connect(`${rt.url.replace('http', 'ws')}/v1/ops/stream?token=${token}`);
}

beforeAll(async () => {
  rt = await startTestRuntime({ apiDocs: true, agentModel: agent, rateLimit: { perSecond: 1e6, burst: 1e6 } }, { TURN_BUDGET_MS: '300' });
  operator = generateToken('operator');
  caregiver = generateToken('caregiver');
  await rt.directory.addApiToken('operator', operator, 'ops');
  await rt.directory.addApiToken('caregiver', caregiver, 'aidant');
});
afterAll(() => rt.close());

describe('operator API', () => {
  it('admits operator and admin tokens only', async () => {
    expect((await get('/v1/ops/sessions', null)).status).toBe(401);
    expect((await get('/v1/ops/sessions', caregiver)).status).toBe(403);
    expect((await get('/v1/ops/sessions')).status).toBe(200);
    expect((await get('/v1/ops/sessions', rt.seed!.adminToken)).status).toBe(200);
    await expect(opsStream(caregiver)).rejects.toMatchObject({ statusCode: 403 });
  });

  it('lists live sessions with state, flux, turns, latency and process; the detail is redacted', async () => {
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await kiosk.start();
    await kiosk.turn('o1', `je vous dis ${CANARY} en secret`);
    await kiosk.turn('o2', 'bonjour');
    const list = JSON.parse((await get('/v1/ops/sessions')).text);
    expect(list.processId).toBe(rt.processId);
    expect(list.sessions).toEqual([
      expect.objectContaining({ sessionId: ready.sessionId, seniorId: rt.seed!.seniorId, processId: rt.processId, local: true, state: expect.stringContaining('conversation.idle'), turnCount: 2, lastFlux: 'cache' }),
    ]);
    const detail = await get(`/v1/ops/sessions/${ready.sessionId}`);
    const view = JSON.parse(detail.text);
    expect(view).toMatchObject({ turnCount: 2, connection: 'attached', window: { messages: 4 }, recentLatenciesMs: [expect.any(Number), expect.any(Number)] });
    expect(view.window.characters).toBeGreaterThan(20);
    expect(detail.text).not.toContain(CANARY);
    expect(detail.text).not.toContain('Bonjour Marie');
    expect((await get('/v1/ops/sessions/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    kiosk.close();
  });

  it('streams state changes live, redacted, and an operator close reaches the kiosk', async () => {
    const ops = await opsStream();
    await ops.next('hello');
    agent.use(hangingModel());
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await kiosk.start();
    kiosk.send({ type: 'turn', turnId: 's1', transcript: `raconte ${CANARY}` });
    const inTurn = await ops.next((f) => f.type === 'session.update' && (f.session as { state: string }).state.includes('conversation.turn.agent'));
    expect(inTurn.session).toMatchObject({ sessionId: ready.sessionId, currentFlux: 'agent', current: { transcriptLength: CANARY.length + 8 } });
    expect(await kiosk.next('reply.done')).toMatchObject({ flux: 'sos' });
    await ops.next((f) => f.type === 'session.update' && (f.session as { state: string }).state.includes('conversation.idle'));

    const closed = await fetch(`${rt.url}/v1/ops/sessions/${ready.sessionId}/close`, { method: 'POST', headers: { authorization: `Bearer ${operator}` } });
    expect(await closed.json()).toEqual({ closed: true, processId: rt.processId });
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'operator' });
    expect(await ops.next('session.closed')).toMatchObject({ sessionId: ready.sessionId, reason: 'operator' });
    expect(JSON.stringify(ops.frames)).not.toContain(CANARY);
    agent.use(streamingModel(['Oui.']));
    kiosk.close();
    ops.close();
  });

  it('drops an operator client too slow to read, without slowing the sessions', async () => {
    const slow = await opsStream();
    await slow.next('hello');
    expect(rt.inspection.subscriberCount).toBe(1);
    // The client stops reading: its TCP buffers fill, then the server's send buffer grows.
    const tcp = (slow.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    tcp.pause();
    // A senior who gave no conversation consent: the thousands of turns below leave nothing to derive at
    // close (their segments' inserts under the vector index were 11 s of the runtime's close).
    const senior = await rt.directory.createSenior({ displayName: 'Flot Rapide', preferredName: 'Flot', onboardingDone: true });
    const token = generateToken('kiosk');
    await rt.directory.addDevice(senior, token);
    const kiosk = await KioskClient.connect(rt.wsUrl, token);
    await kiosk.start();
    let batches = 0;
    while (rt.inspection.subscriberCount > 0 && batches < 100) {
      // Every turn is still answered while the operator lags.
      const done = await Promise.all(Array.from({ length: 100 }, (_, i) => kiosk.turn(`f${batches}-${i}`, 'bonjour')));
      expect(done.every((d) => d.flux === 'cache')).toBe(true);
      batches += 1;
    }
    expect(rt.inspection.subscriberCount).toBe(0);
    // Its close frame waits behind the megabytes it has not read: a client that reads them within the
    // server's 5 s sees the close code; one still behind then is cut (1006), as at load 13 this one was.
    tcp.resume();
    expect([OPS_STREAM_TOO_SLOW, 1006]).toContain(await slow.closed);
    expect(await kiosk.turn('after', 'salut')).toMatchObject({ flux: 'cache' });
    kiosk.close();
    // Fixed work, not a wait: thousands of turns' updates fill the loopback's buffers (megabytes) before
    // the server's own; 10 s on a quiet machine, more than 30 s at load 12.
  }, 120_000);
});

describe('metrics', () => {
  it('exposes the runtime’s Prometheus metrics to operators', async () => {
    expect((await get('/metrics', null)).status).toBe(401);
    const { status, text } = await get('/metrics');
    expect(status).toBe(200);
    for (const name of [
      'kohami_live_sessions',
      'kohami_turns_total{flux="cache"}',
      'kohami_turn_latency_seconds_bucket',
      'kohami_sos_fallback_total{reason="budget"}',
      'kohami_cacheflux_hits_total',
      'kohami_close_jobs_total',
      'kohami_close_job_duration_seconds',
      'kohami_close_jobs_queued',
      'kohami_close_jobs_in_flight',
      'kohami_close_jobs_transcripts_held',
      'kohami_close_jobs_held_bytes',
      'kohami_close_jobs_retried_total',
      'kohami_close_jobs_dropped_total',
      'kohami_memory_dual_write_total',
    ]) {
      expect(text).toContain(name);
    }
    expect(text).not.toContain(CANARY);
  });
});

describe('API documentation', () => {
  it('serves OpenAPI for every HTTP route, generated from the zod schemas, and a UI at /docs', async () => {
    const spec = JSON.parse((await get('/docs/json', null)).text) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(spec.openapi).toMatch(/^3\./);
    for (const path of [
      '/health',
      '/ready',
      '/v1/admin/seniors/{id}/consents',
      '/v1/admin/seniors/{id}/consents/{category}',
      '/v1/admin/seniors/{id}/facts',
      '/v1/admin/seniors/{id}/data',
      '/v1/admin/seniors/{id}/mood-entries',
      '/v1/admin/seniors/{id}/mood-timeline',
      '/v1/admin/seniors/{id}/export',
      '/v1/ops/sessions',
      '/v1/ops/sessions/{id}',
      '/v1/ops/sessions/{id}/close',
    ]) {
      expect(Object.keys(spec.paths)).toContain(path);
    }
    expect(JSON.stringify(spec.paths['/v1/admin/seniors/{id}/mood-entries'])).toContain('limit');
    const ui = await get('/docs', null);
    expect(ui.status).toBe(200);
    expect(ui.text.toLowerCase()).toContain('swagger');
  });
});


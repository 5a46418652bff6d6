import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { SessionClosed } from '../../machines/session/session.types.ts';
import { MAX_FRAME_BYTES } from '../../runtime/protocol/messages.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { controllableModel, failingModel, hangingModel, streamingModel, switchableModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** One agent model for the file's runtime; each test swaps its behaviour. */
const agent = switchableModel(streamingModel(['Je vous ', 'écoute.']));
/** The file's runtime's text-frame limit. */
const RATE = { perSecond: 50, burst: 60 };
/** KIOSK_HEARTBEAT_MS of the heartbeat test's runtime, on fake timers; below every other interval of the runtime (presence: 5 s), so only the heartbeat beats. */
const HEARTBEAT_MS = 40;
/** The heartbeat test opens a runtime of its own (PGlite in the test): real time, stretched by a loaded machine. */
const OWN_RUNTIME_TEST_MS = 120_000;
let rt: TestRuntime;
const open: KioskClient[] = [];
async function kiosk(token = KIOSK_TOKEN, options: WebSocket.ClientOptions = {}) {
  const client = await KioskClient.connect(rt.wsUrl, token, options);
  open.push(client);
  return client;
}

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: agent, rateLimit: RATE }, { TURN_BUDGET_MS: '400', KIOSK_GRACE_MS: '60000' });
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  for (const c of open) c.close();
  await rt.close();
});

describe('kiosk gateway, end to end over a real socket', () => {
  it('/health and /ready answer', async () => {
    expect(await (await fetch(`${rt.url}/health`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${rt.url}/ready`);
    expect(ready.status).toBe(200);
  });

  it('refuses a missing or unknown token at upgrade with 401', async () => {
    await expect(KioskClient.connect(rt.wsUrl)).rejects.toMatchObject({ statusCode: 401 });
    await expect(KioskClient.connect(rt.wsUrl, 'kiosk_not_a_real_token')).rejects.toMatchObject({ statusCode: 401 });
    const viaQuery = await KioskClient.connect(`${rt.wsUrl}?token=${KIOSK_TOKEN}`);
    open.push(viaQuery);
    expect((await viaQuery.start()).type).toBe('session.ready');
  });

  it('greets from CacheFlux and rotates the variations', async () => {
    const k = await kiosk();
    const ready = await k.start();
    expect(ready).toMatchObject({ type: 'session.ready', seniorId: rt.seed!.seniorId, resumed: false });
    const first = await k.turn('t1', 'Bonjour');
    const second = await k.turn('t2', 'bonjour');
    expect(first).toMatchObject({ flux: 'cache', text: 'Bonjour Marie, ravi de vous revoir.' });
    expect(second.flux).toBe('cache');
    expect(second.text).not.toBe(first.text);
  });

  it('streams an agent reply: deltas, then done with flux and latency', async () => {
    agent.use(streamingModel(['Je vous ', 'écoute.']));
    const k = await kiosk();
    await k.start();
    k.send({ type: 'turn', turnId: 'a1', transcript: 'je suis allée au marché ce matin' });
    const d1 = await k.next('reply.delta');
    const d2 = await k.next('reply.delta');
    const done = await k.next('reply.done');
    expect([d1.text, d2.text]).toEqual(['Je vous ', 'écoute.']);
    expect(done).toMatchObject({ turnId: 'a1', flux: 'agent', text: 'Je vous écoute.' });
    expect(typeof done.latencyMs).toBe('number');
  });

  it('answers with the SOS line when the model is slower than the budget, and never sends the late reply', async () => {
    const slow = hangingModel();
    agent.use(slow);
    const k = await kiosk();
    await k.start();
    const done = await k.turn('s1', 'raconte-moi quelque chose');
    expect(done).toMatchObject({ flux: 'sos', text: 'Bien sûr, je vous écoute.' });
    expect(slow.state.aborted).toBe(1);
    expect(k.frames.filter((f) => f.type === 'reply.delta')).toHaveLength(0);
  });

  it('answers with the SOS line when the model fails twice', async () => {
    agent.use(failingModel(2));
    const k = await kiosk();
    await k.start();
    expect(await k.turn('f1', 'tu es là ?')).toMatchObject({ flux: 'sos' });
  });

  it('barge-in stops the reply at once and the next turn works', async () => {
    const model = controllableModel(['Il était ', 'une fois ', 'un roi.']);
    agent.use(model);
    const k = await kiosk();
    await k.start();
    k.send({ type: 'turn', turnId: 'b1', transcript: 'raconte-moi une histoire' });
    await k.next('reply.delta');
    k.send({ type: 'interrupt', turnId: 'b1' });
    const done = await k.next('reply.done');
    expect(done).toMatchObject({ turnId: 'b1', interrupted: true, text: 'Il était ' });
    model.release();
    expect(await k.turn('b2', 'coucou')).toMatchObject({ flux: 'cache' });
    expect(k.frames.filter((f) => f.type === 'reply.delta' && f.turnId === 'b1')).toHaveLength(1);
  });

  it('answers every bad frame with a stable error code, and the session lives on', async () => {
    const k = await kiosk();
    await k.start();
    const cases: Array<[string | Buffer, string]> = [
      ['{oops', 'invalid_json'],
      ['{"type":"sing"}', 'unknown_type'],
      ['{"type":"turn","turnId":"x"}', 'invalid_frame'],
      ['{"type":"turn","turnId":1,"transcript":"a"}', 'invalid_frame'],
      [Buffer.from([1, 2, 3]), 'binary_not_supported'],
    ];
    for (const [raw, code] of cases) {
      k.socket.send(raw);
      const err = await k.next('error');
      expect(err.code).toBe(code);
      expect(String(err.message).length).toBeGreaterThan(5);
    }
    expect(await k.turn('ok', 'salut')).toMatchObject({ flux: 'cache' });
  });

  it('refuses a turn before session.start with no_session', async () => {
    const k = await kiosk();
    k.send({ type: 'turn', turnId: 'n1', transcript: 'bonjour' });
    expect(await k.next('error')).toMatchObject({ code: 'no_session', turnId: 'n1' });
  });

  it('answers ping with pong', async () => {
    const k = await kiosk();
    k.send({ type: 'ping' });
    expect((await k.next('pong')).type).toBe('pong');
  });

  it('closes the socket with 1009 on a frame over the size limit', async () => {
    const k = await kiosk();
    k.send({ type: 'turn', turnId: 'big', transcript: 'a'.repeat(MAX_FRAME_BYTES + 1) });
    expect(await k.closed).toBe(1009);
  });

  it('rate-limits a flooding kiosk with an error frame, without crashing', async () => {
    const k = await kiosk();
    for (let i = 0; i < 200; i++) k.send({ type: 'ping' });
    const limited = await k.next((f) => f.type === 'error' && f.code === 'rate_limited');
    expect(String(limited.message)).toContain('per second');
    const pongs = k.frames.filter((f) => f.type === 'pong').length;
    expect(pongs).toBeLessThan(200);
    expect((await fetch(`${rt.url}/health`)).status).toBe(200);
  });

  it('a wall clock stepping back 60 s still admits the burst of text frames', async () => {
    // Only the wall clock moves, as when NTP steps it: the monotonic clock goes on.
    vi.useFakeTimers({ toFake: ['Date'] });
    const k = await kiosk();
    vi.setSystemTime(Date.now() - 60_000);
    for (let i = 0; i < RATE.burst; i++) k.send({ type: 'ping' });
    const pongs = () => k.frames.filter((f) => f.type === 'pong').length;
    await k.next((f) => f.type === 'error' || pongs() === RATE.burst);
    expect(k.frames).toEqual(Array.from({ length: RATE.burst }, () => ({ type: 'pong' })));
  });

  it('a second connection for the same senior takes over; the first hears "replaced"', async () => {
    const first = await kiosk();
    const a = await first.start();
    const second = await kiosk();
    const b = await second.start();
    expect(await first.next('session.closed')).toMatchObject({ reason: 'replaced' });
    expect(b.sessionId).not.toBe(a.sessionId);
    expect(await second.turn('r1', 'bonsoir')).toMatchObject({ flux: 'cache' });
    first.send({ type: 'turn', turnId: 'r2', transcript: 'bonjour' });
    expect(await first.next('error')).toMatchObject({ code: 'no_session' });
  });

  it('a dropped kiosk resumes its session within the grace period, window intact', async () => {
    agent.use(streamingModel(['Bien noté.']));
    const first = await kiosk();
    const a = await first.start();
    await first.turn('w1', 'ma fille Claire vient dimanche');
    first.socket.terminate();
    await first.closed;
    const again = await kiosk();
    const b = await again.start(true);
    expect(b).toMatchObject({ sessionId: a.sessionId, resumed: true });
    const live = rt.registry.get(rt.seed!.seniorId)!;
    expect(live.actor.getSnapshot().context.window.map((m) => m.content)).toContain('ma fille Claire vient dimanche');
  });

  it('a kiosk that stops answering pings is considered gone', async () => {
    // The heartbeat is the runtime's own interval: faked, it beats when the test says, not while the
    // kiosk is still starting on a loaded machine.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const quick = await startTestRuntime({ agentModel: agent }, { KIOSK_HEARTBEAT_MS: String(HEARTBEAT_MS) });
    try {
      const mute = await KioskClient.connect(quick.wsUrl, KIOSK_TOKEN, { autoPong: false });
      await mute.start();
      // One beat: a ping, left unanswered; the kiosk is still connected.
      const pinged = once(mute.socket, 'ping');
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await pinged;
      expect(mute.socket.readyState).toBe(WebSocket.OPEN);
      // The next beat finds no pong since the last: the socket is dropped.
      vi.advanceTimersByTime(HEARTBEAT_MS);
      expect(await mute.closed).toBe(1006);
      await expect.poll(() => quick.registry.get(quick.seed!.seniorId)?.link ?? null).toBeNull();
      expect(quick.registry.get(quick.seed!.seniorId)).toBeDefined();
    } finally {
      await quick.close();
    }
  }, OWN_RUNTIME_TEST_MS);

  it('session.end closes the session, the kiosk hears why, and SessionClosed carries the turns', async () => {
    const closes: SessionClosed[] = [];
    const unsubscribe = rt.registry.onSessionClosed((e) => closes.push(e));
    const k = await kiosk();
    const ready = await k.start();
    await k.turn('e1', 'bonjour');
    k.send({ type: 'session.end' });
    expect(await k.next('session.closed')).toMatchObject({ reason: 'ended' });
    unsubscribe();
    expect(rt.registry.get(rt.seed!.seniorId)).toBeUndefined();
    const mine = closes.find((e) => e.sessionId === ready.sessionId);
    expect(mine).toMatchObject({ reason: 'ended', seniorId: rt.seed!.seniorId, turns: [{ turnId: 'e1', transcript: 'bonjour', flux: 'cache' }] });
  });
});

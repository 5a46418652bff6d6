import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { backoffDelayMs, DEFAULT_BACKOFF, DEFAULT_BOUNDS, KioskClient, type KioskClientEvents, type KioskError } from '../src/index.ts';
import { wsSocket } from '../src/node.ts';
import { answersStart, LocalServer } from './local-server.ts';

/**
 * Every wait the client makes has a bound, and the resume's back-off follows its schedule: real
 * sockets on loopback, fake timers (and clock), so no test waits the bounds out.
 */
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0)) await close();
});

async function serve(onConnection: Parameters<typeof LocalServer.start>[0]): Promise<LocalServer> {
  const server = await LocalServer.start(onConnection);
  closers.push(() => server.close());
  return server;
}

function client(url: string, options: Partial<ConstructorParameters<typeof KioskClient>[0]> = {}): KioskClient {
  const c = new KioskClient({ url, token: 'kiosk_local', socket: wsSocket(WebSocket), ...options });
  closers.push(() => c.close());
  return c;
}

/** The next `event` of `c`'s, as a promise (fake timers: no polling). */
const next = <E extends keyof KioskClientEvents & string>(c: KioskClient, event: E) => new Promise<KioskClientEvents[E]>((resolve) => c.once(event, resolve));

const rejection = (p: Promise<unknown>): Promise<KioskError> => p.then(() => Promise.reject(new Error('resolved')), (e: unknown) => e as KioskError);

describe('bounded waits', () => {
  it('a host that takes the TCP connection and never answers the handshake: connect_timeout, and the connection is let go', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const sockets: Socket[] = [];
    const server = createServer((s) => {
      sockets.push(s);
      s.resume();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(() => {
      server.close();
      for (const s of sockets) s.destroy();
    });
    const connected = once(server, 'connection');
    const c = client(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/kiosk`);
    const failed = rejection(c.connect());
    await connected;
    const letGo = once(sockets[0]!, 'close');
    await vi.advanceTimersByTimeAsync(DEFAULT_BOUNDS.connectTimeoutMs - 1);
    expect(c.state).toBe('connecting');
    await vi.advanceTimersByTimeAsync(1);
    expect((await failed).code).toBe('connect_timeout');
    await letGo;
  });

  it('a WebSocket server that never answers session.start: ready_timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const server = await serve(() => {});
    const c = client(server.url, { readyTimeoutMs: 2_000 });
    const failed = rejection(c.connect());
    await server.until(() => server.received.length === 1);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(c.state).toBe('starting');
    await vi.advanceTimersByTimeAsync(1);
    expect((await failed).code).toBe('ready_timeout');
    expect(server.frames()).toEqual([{ type: 'session.start', resume: false }]);
  });

  it('a turn with no reply.done: reply_timeout; a ping with no pong: pong_timeout; session.end with no session.closed: end_timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await serve(answersStart());
    const c = client(server.url);
    await c.connect();
    const turn = c.turn('Bonjour');
    const reply = rejection(turn.reply);
    const pong = rejection(c.ping());
    await vi.advanceTimersByTimeAsync(DEFAULT_BOUNDS.pingTimeoutMs);
    expect((await pong).code).toBe('pong_timeout');
    await vi.advanceTimersByTimeAsync(DEFAULT_BOUNDS.replyTimeoutMs - DEFAULT_BOUNDS.pingTimeoutMs);
    const late = await reply;
    expect([late.code, late.turnId]).toEqual(['reply_timeout', turn.turnId]);
    const ended = rejection(c.end());
    await vi.advanceTimersByTimeAsync(DEFAULT_BOUNDS.endTimeoutMs);
    expect((await ended).code).toBe('end_timeout');
    expect(c.state).toBe('closed');
  });
});

describe('resume after a lost socket', () => {
  const BACKOFF = { baseMs: 100, maxDelayMs: 1_000, maxAttempts: 5, maxTotalMs: 60_000 };

  it('follows the jittered exponential schedule, one upgrade per attempt and none early, then gives up: resume_failed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    // The first socket gets its session, then is dropped; every upgrade after it is refused (503).
    const server = await serve(
      answersStart((ws) => {
        server.accept = false;
        ws.terminate();
      }),
    );
    const c = client(server.url, { reconnect: BACKOFF, random: () => 0.5 });
    const closed = next(c, 'client.closed');
    let reconnecting = next(c, 'client.reconnecting');
    await c.connect();
    const expected = [75, 150, 300, 600, 750];
    expect(expected).toEqual([1, 2, 3, 4, 5].map((n) => backoffDelayMs(n, BACKOFF, () => 0.5)));
    for (const [i, delayMs] of expected.entries()) {
      expect(await reconnecting).toEqual({ attempt: i + 1, delayMs });
      if (i + 1 < expected.length) reconnecting = next(c, 'client.reconnecting');
      await vi.advanceTimersByTimeAsync(delayMs - 1);
      expect(server.upgrades).toHaveLength(i + 1);
      await vi.advanceTimersByTimeAsync(1);
      await server.until(() => server.upgrades.length === i + 2);
    }
    const end = await closed;
    expect([end.reason, end.error?.code]).toEqual(['lost', 'resume_failed']);
    expect(end.error?.message).toContain('refused: HTTP 503');
    expect(server.upgrades).toHaveLength(6);
  });

  it('gives up at maxTotalMs even with attempts left', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await serve(
      answersStart((ws) => {
        server.accept = false;
        ws.terminate();
      }),
    );
    const c = client(server.url, { reconnect: { baseMs: 1_000, maxDelayMs: 10_000, maxAttempts: 10, maxTotalMs: 2_500 }, random: () => 0.5 });
    const attempts: number[] = [];
    c.on('client.reconnecting', (r) => attempts.push(r.delayMs));
    const closed = next(c, 'client.closed');
    const first = next(c, 'client.reconnecting');
    await c.connect();
    await first;
    const second = next(c, 'client.reconnecting');
    await vi.advanceTimersByTimeAsync(750);
    await second;
    await vi.advanceTimersByTimeAsync(1_500);
    // 750 + 1,500 ms spent; the third wait (3,000 ms) would start past 2,500 ms.
    expect((await closed).error?.code).toBe('resume_failed');
    expect(attempts).toEqual([750, 1_500]);
    expect(server.upgrades).toHaveLength(3);
  });

  it('on its defaults, a kiosk goes on trying through a 10-minute outage at the capped interval, then starts a new session', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const OUTAGE_MS = 10 * 60_000;
    // The first socket gets its session, then the runtime goes (every upgrade refused, as a proxy
    // answers for a runtime restarting behind it); it comes back without that session.
    let restarted = false;
    const server = await serve((ws) =>
      ws.on('message', (data) => {
        const f = JSON.parse(data.toString()) as { type: string; turnId?: string; resume?: boolean };
        if (f.type === 'session.start' && !restarted) {
          ws.send(JSON.stringify({ type: 'session.ready', sessionId: 'before', seniorId: 'senior', resumed: false }));
          server.accept = false;
          ws.terminate();
        } else if (f.type === 'session.start') {
          ws.send(JSON.stringify({ type: 'session.ready', sessionId: 'after', seniorId: 'senior', resumed: false }));
        } else if (f.type === 'turn') {
          ws.send(JSON.stringify({ type: 'reply.done', turnId: f.turnId, text: 'Bonjour', flux: 'cache', latencyMs: 0 }));
        }
      }),
    );
    const c = client(server.url, { random: () => 0.5 });
    const closed: unknown[] = [];
    c.on('client.closed', (e) => closed.push(e));
    const gaveUp = next(c, 'client.closed').then((e) => Promise.reject(new Error(`the client gave up: ${e.error?.message}`)));
    const delays: number[] = [];
    let reconnecting = next(c, 'client.reconnecting');
    await c.connect();
    const lostAt = Date.now();
    while (Date.now() - lostAt < OUTAGE_MS) {
      const { attempt, delayMs } = await Promise.race([reconnecting, gaveUp]);
      delays.push(delayMs);
      expect(delayMs).toBe(backoffDelayMs(attempt, DEFAULT_BACKOFF, () => 0.5));
      reconnecting = next(c, 'client.reconnecting');
      // None early: the attempt's upgrade comes when its wait is over.
      await vi.advanceTimersByTimeAsync(delayMs - 1);
      expect(server.upgrades).toHaveLength(attempt);
      await vi.advanceTimersByTimeAsync(1);
      await server.until(() => server.upgrades.length === attempt + 1);
      expect([c.state, closed]).toEqual(['reconnecting', []]);
    }
    // Quick attempts first (within the runtime's 30 s grace), then the capped interval and no longer.
    const steady = backoffDelayMs(DEFAULT_BACKOFF.quickAttempts + 1, DEFAULT_BACKOFF, () => 0.5);
    expect(steady).toBeLessThanOrEqual(DEFAULT_BACKOFF.steadyDelayMs);
    expect(delays.slice(0, DEFAULT_BACKOFF.quickAttempts).every((d) => d <= DEFAULT_BACKOFF.maxDelayMs)).toBe(true);
    expect(new Set(delays.slice(DEFAULT_BACKOFF.quickAttempts))).toEqual(new Set([steady]));
    expect(delays.length).toBeGreaterThan(OUTAGE_MS / DEFAULT_BACKOFF.steadyDelayMs);

    // The runtime is back: the next attempt asks for the session back, and gets a new one.
    restarted = true;
    server.accept = true;
    const ready = next(c, 'session.ready');
    const { delayMs } = await reconnecting;
    await vi.advanceTimersByTimeAsync(delayMs);
    expect(await ready).toMatchObject({ sessionId: 'after', resumed: false });
    expect([c.state, c.session?.sessionId, closed]).toEqual(['ready', 'after', []]);
    expect(server.frames().filter((f) => f.type === 'session.start').map((f) => f.resume)).toEqual([false, true]);
    expect((await c.turn('Bonjour').reply).text).toBe('Bonjour');
  });

  it('a maker can still bound it: maxTotalMs over the steady attempts gives up with resume_failed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const server = await serve(
      answersStart((ws) => {
        server.accept = false;
        ws.terminate();
      }),
    );
    const c = client(server.url, { reconnect: { quickAttempts: 1, baseMs: 1_000, steadyDelayMs: 4_000, maxTotalMs: 9_000 }, random: () => 0.5 });
    const attempts: number[] = [];
    const closed = next(c, 'client.closed');
    let reconnecting = next(c, 'client.reconnecting');
    await c.connect();
    for (let i = 0; i < 3; i++) {
      const { delayMs } = await reconnecting;
      attempts.push(delayMs);
      if (i < 2) reconnecting = next(c, 'client.reconnecting');
      await vi.advanceTimersByTimeAsync(delayMs);
    }
    // 750 + 3,000 + 3,000 ms spent; the fourth wait (3,000 ms) would start past 9 s.
    const end = await closed;
    expect([end.reason, end.error?.code, end.error?.status]).toEqual(['lost', 'resume_failed', 503]);
    expect(attempts).toEqual([750, 3_000, 3_000]);
    expect(server.upgrades).toHaveLength(4);
  });

  it('reconnect options out of range are refused at construction', () => {
    expect(() => new KioskClient({ url: 'ws://127.0.0.1:9/v1/kiosk', token: 't', reconnect: { steadyDelayMs: 0 } })).toThrow('reconnect.steadyDelayMs must be above 0');
    expect(() => new KioskClient({ url: 'ws://127.0.0.1:9/v1/kiosk', token: 't', reconnect: { quickAttempts: -1 } })).toThrow('reconnect.quickAttempts must be 0 or more');
  });

  it.each([
    ['answers it on the resumed socket', 'answer', 'reply.done'],
    ['already answered it (to the lost socket)', 'duplicate', 'reply_lost'],
  ])('a turn in flight when the socket drops is sent again, same turnId, on the resumed session; when the runtime %s', async (_label, mode, outcome) => {
    let connections = 0;
    const server = await serve((ws) => {
      connections += 1;
      const first = connections === 1;
      answersStart()(ws);
      ws.on('message', (data) => {
        const f = JSON.parse(data.toString()) as { type: string; turnId: string };
        if (f.type !== 'turn') return;
        if (first) return ws.terminate();
        if (mode === 'duplicate') return ws.send(JSON.stringify({ type: 'error', code: 'duplicate_turn', message: 'already', turnId: f.turnId }));
        ws.send(JSON.stringify({ type: 'reply.done', turnId: f.turnId, text: 'Me revoilà', flux: 'agent', latencyMs: 5 }));
      });
    });
    const c = client(server.url, { reconnect: { baseMs: 20 }, random: () => 0 });
    await c.connect();
    const { turnId, reply } = c.turn('Vous êtes là ?');
    const result = await reply.then(
      (done) => done.type,
      (err: KioskError) => err.code,
    );
    expect(result).toBe(outcome);
    expect(server.frames().map((f) => [f.type, f.resume ?? f.turnId])).toEqual([
      ['session.start', false],
      ['turn', turnId],
      ['session.start', true],
      ['turn', turnId],
    ]);
    expect(c.session?.resumed).toBe(true);
  });
});

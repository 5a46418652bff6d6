import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { loadConfig } from '../../runtime/config.ts';
import { KioskClient, type Frame } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * One kiosk token flooding `session.start` — many sockets, each within its own frame limit (20 a
 * second, burst 40) — must not stall another senior's start (issue 20, item 2): the flood is bounded
 * per senior (sockets, then starts), and the flooder is told so by name.
 */
const LIMITS = { KIOSK_SOCKETS_PER_SENIOR: 20, KIOSK_STARTS_BURST: 5, KIOSK_STARTS_PER_MINUTE: 60 };
/** The per-socket text-frame limit the flood stays within (the gateway's default). */
const FRAME_BURST = 40;
const FRAME_EVERY_MS = 1000 / 20;
const defaults = loadConfig({ KOHAMI_ENV: 'test' });
/** Other seniors starting one after another while the flood goes on. */
const OTHERS = 6;

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: streamingModel(['Je vous écoute.']) }, Object.fromEntries(Object.entries(LIMITS).map(([k, v]) => [k, String(v)])));
});
afterAll(() => rt.close());

async function otherSenior(): Promise<{ seniorId: string; token: string }> {
  const seniorId = await rt.directory.createSenior({ displayName: 'Jeanne', preferredName: 'Jeanne', onboardingDone: true });
  const token = generateToken('kiosk');
  await rt.directory.addDevice(seniorId, token);
  return { seniorId, token };
}

/** Opens `n` sockets on `token` at once: the ones that opened, and the HTTP statuses of the refused. */
async function sockets(token: string, n: number): Promise<{ open: KioskClient[]; refused: number[] }> {
  const settled = await Promise.allSettled(Array.from({ length: n }, () => KioskClient.connect(rt.wsUrl, token)));
  return {
    open: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    refused: settled.flatMap((s) => (s.status === 'rejected' ? [(s.reason as { statusCode: number }).statusCode] : [])),
  };
}

const started = (seniorId: string) => rt.logs.lines.filter((l) => l.includes('"msg":"session started"') && l.includes(seniorId)).length;

describe('a flood of session.start from one kiosk token', () => {
  it('leaves other seniors’ starts answered within the turn budget, and the flooder is refused by name', { timeout: 120_000 }, async () => {
    const others = [];
    for (let i = 0; i < OTHERS; i++) {
      const other = await otherSenior();
      others.push({ ...other, kiosk: await KioskClient.connect(rt.wsUrl, other.token) });
    }
    const marie = rt.seed!.seniorId;
    const startsBefore = started(marie);

    // More sockets than a senior may hold; each sends its whole frame burst of starts, then 20 a second.
    const flood = await sockets(KIOSK_TOKEN, LIMITS.KIOSK_SOCKETS_PER_SENIOR + 4);
    const floodStartedAt = performance.now();
    for (const k of flood.open) for (let i = 0; i < FRAME_BURST; i++) k.send({ type: 'session.start' });
    const steady = setInterval(() => {
      for (const k of flood.open) k.send({ type: 'session.start' });
    }, FRAME_EVERY_MS);
    try {
      // The flood is being served (a first answer to it) before the other senior asks.
      await Promise.race(flood.open.map((k) => k.next(() => true)));
      // One after another, for as long as the flood lasts: each is ready within the bound the runtime
      // keeps for an answer, flood or not.
      for (const other of others) {
        const t0 = performance.now();
        other.kiosk.send({ type: 'session.start' });
        const ready = await other.kiosk.next('session.ready');
        const waitedMs = performance.now() - t0;
        expect(ready).toMatchObject({ seniorId: other.seniorId, resumed: false });
        expect(waitedMs).toBeLessThan(defaults.TURN_BUDGET_MS);
      }
    } finally {
      clearInterval(steady);
    }
    const floodMs = performance.now() - floodStartedAt;

    // The sockets past the cap were refused at the upgrade, with 429.
    expect(flood.open).toHaveLength(LIMITS.KIOSK_SOCKETS_PER_SENIOR);
    expect(flood.refused).toEqual(Array(4).fill(429));
    // The starts past the senior's bucket were refused by name, with when to retry.
    const refusals = flood.open.flatMap((k) => k.frames.filter((f) => f.type === 'error' && f.code === 'start_rate_limited'));
    expect(refusals.length).toBeGreaterThan(0);
    for (const r of refusals) expect(r.retryAfterMs).toEqual(expect.any(Number));
    expect(Math.max(...refusals.map((r) => r.retryAfterMs as number))).toBeLessThanOrEqual(60_000 / LIMITS.KIOSK_STARTS_PER_MINUTE);
    // What reached the database: no more new sessions than the bucket admitted starts.
    expect(started(marie) - startsBefore).toBeLessThanOrEqual(LIMITS.KIOSK_STARTS_BURST + Math.ceil((floodMs / 60_000) * LIMITS.KIOSK_STARTS_PER_MINUTE) + 1);

    // A refused start loses nothing: the senior's live session still answers on the socket that holds it.
    const live = rt.registry.get(marie);
    const holder = flood.open.find((k) => {
      const last = [...k.frames].reverse().find((f: Frame) => f.type === 'session.ready' || f.type === 'session.closed');
      return last?.type === 'session.ready' && last.sessionId === live?.sessionId;
    });
    expect(holder).toBeDefined();
    expect(live!.actor.getSnapshot().status).toBe('active');
    // (A turn dropped by the socket's own frame limit, spent by the flood, is named and sent again.)
    let answer: Frame;
    do {
      holder!.send({ type: 'turn', turnId: 'after-flood', transcript: 'vous êtes toujours là ?' });
      answer = await holder!.next((f) => f.turnId === 'after-flood' && (f.type === 'reply.done' || f.type === 'error'));
    } while (answer.type === 'error' && answer.code === 'rate_limited');
    expect(answer).toMatchObject({ type: 'reply.done', turnId: 'after-flood' });

    for (const k of [...flood.open, ...others.map((o) => o.kiosk)]) k.close();
  });
});

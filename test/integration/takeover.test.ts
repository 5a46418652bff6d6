import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import { PgSignals } from '../../adapters/postgres/pg-signals.ts';
import { createLogger } from '../../runtime/logger.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { Takeovers } from '../../runtime/sessions/takeover.ts';
import { createSeniors, migratedDatabase } from '../support/database.ts';
import { testRegistry } from '../support/registry.ts';

/** Two processes' registries on one database (served over the wire), each with its own signals listener. */
let db: Awaited<ReturnType<typeof migratedDatabase>>;
const stops: Array<() => Promise<void>> = [];
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await db.close();
});

const STALE_MS = 15_000;

async function processOn(processId: string, opts: { listening: boolean; ackMs: number }) {
  const logger = createLogger('silent');
  const signals = new PgSignals(db.pool, processId, logger);
  if (opts.listening) await signals.start();
  const takeovers = new Takeovers(signals, processId, opts.ackMs, logger);
  const presence = new PgPresenceRepository(db.pool);
  const registry = testRegistry(presence, processId, STALE_MS, { takeovers });
  takeovers.serve(registry);
  await registry.heartbeat(STALE_MS);
  stops.push(async () => {
    registry.closeAll('shutdown');
    await signals.stop();
    await presence.releaseProcess(processId);
  });
  return { registry };
}

function kiosk() {
  const frames: Array<{ at: number; frame: ServerFrame }> = [];
  return { frames, link: { send: (frame: ServerFrame) => frames.push({ at: performance.now(), frame }) } };
}

describe('a takeover across processes (LISTEN/NOTIFY)', () => {
  it('the old process closes its session before the new one is handed out, with no heartbeat', async () => {
    const [paul] = await createSeniors(db, 1);
    // A bound far longer than the test: only the other process's answer can let the start through.
    const a = await processOn('t-a', { listening: true, ackMs: 600_000 });
    const b = await processOn('t-b', { listening: true, ackMs: 600_000 });
    const old = kiosk();
    await a.registry.start(paul!, old.link, false);
    const started = await b.registry.start(paul!, kiosk().link, false);
    const handedOutAt = performance.now();
    const closed = old.frames.find((f) => f.frame.type === 'session.closed');
    expect(closed?.frame).toEqual({ type: 'session.closed', reason: 'replaced' });
    expect(closed!.at).toBeLessThan(handedOutAt);
    expect(a.registry.get(paul!)).toBeUndefined();
    expect(b.registry.get(paul!)?.sessionId).toBe(started.session.sessionId);
  });

  it('an old process that cannot hear: the start goes on after TAKEOVER_ACK_MS, and the old session closes at its heartbeat', async () => {
    const [jeanne] = await createSeniors(db, 1);
    const deaf = await processOn('t-deaf', { listening: false, ackMs: 100 });
    const b = await processOn('t-b2', { listening: true, ackMs: 100 });
    const old = kiosk();
    await deaf.registry.start(jeanne!, old.link, false);
    const began = performance.now();
    await b.registry.start(jeanne!, kiosk().link, false);
    // It waited the bound for an answer that could not come (a timer may fire a hair early on the clock read here).
    expect(performance.now() - began).toBeGreaterThanOrEqual(95);
    expect(deaf.registry.get(jeanne!)).toBeDefined();
    await deaf.registry.heartbeat(STALE_MS);
    expect(old.frames.map((f) => f.frame)).toContainEqual({ type: 'session.closed', reason: 'replaced' });
    expect(deaf.registry.get(jeanne!)).toBeUndefined();
  });
});

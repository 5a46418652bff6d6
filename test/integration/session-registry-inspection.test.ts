import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import { InspectionHub, type InspectionObserver, type OpsEvent } from '../../runtime/ops/inspection-hub.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { createSeniors, migratedDatabase } from '../support/database.ts';
import { testRegistry } from '../support/registry.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
let seniors: string[];
beforeAll(async () => {
  db = await migratedDatabase();
  seniors = await createSeniors(db, 3);
});
afterAll(() => db.close());

/** The real hub and registry; the observer the registry is given counts what XState hands it, then passes it on to the hub. */
function setup() {
  const hub = new InspectionHub();
  const received: InspectionEvent[] = [];
  const observe: InspectionObserver = Object.assign(
    (event: InspectionEvent) => {
      received.push(event);
      hub.observe(event);
    },
    { watching: hub.observe.watching },
  );
  const registry = testRegistry(new PgPresenceRepository(db.pool), `test-${Math.random()}`, 15_000, { preferredName: 'Marie', inspect: observe });
  const frames: ServerFrame[] = [];
  const link = { send: (frame: ServerFrame) => frames.push(frame) };
  return { hub, registry, received, frames, link };
}

describe('inspection only while someone watches (issue 13)', () => {
  it('no inspection event is built while nobody watches; an operator arriving mid-session sees the session as it is, then each turn; leaving stops them', async () => {
    const { hub, registry, received, frames, link } = setup();
    const { session } = await registry.start(seniors[0]!, link, false);
    session.actor.send({ type: 'TURN', turnId: 't1', transcript: 'Bonjour' });
    expect(frames.at(-1)).toMatchObject({ type: 'reply.done', turnId: 't1', flux: 'cache' });
    expect(received).toHaveLength(0);

    const seen: OpsEvent[] = [];
    const unsubscribe = hub.subscribe((event) => seen.push(event));
    // The observer first hears of the actor it is attached to, as XState tells an observer given at creation.
    expect(received[0]).toMatchObject({ type: '@xstate.actor', rootId: session.actor.sessionId });
    expect(received[0]!.actorRef).toBe(session.actor);
    session.actor.send({ type: 'TURN', turnId: 't2', transcript: 'salut' });
    expect(received.some((e) => e.type === '@xstate.event' && e.event.type === 'TURN')).toBe(true);
    // The view comes from the snapshot: the turn answered before anyone watched is counted.
    expect(seen.at(-1)).toMatchObject({ type: 'session.update', session: { sessionId: session.sessionId, turnCount: 2, lastTurn: { flux: 'cache' } } });

    unsubscribe();
    const before = received.length;
    session.actor.send({ type: 'TURN', turnId: 't3', transcript: 'coucou' });
    expect(frames.at(-1)).toMatchObject({ type: 'reply.done', turnId: 't3', flux: 'cache' });
    expect(received).toHaveLength(before);
    registry.closeAll('shutdown');
  });

  it('a session started while someone watches is inspected from its creation, and its close reaches the operator', async () => {
    const { hub, registry, received, link } = setup();
    const seen: OpsEvent[] = [];
    const unsubscribe = hub.subscribe((event) => seen.push(event));
    const { session } = await registry.start(seniors[1]!, link, false);
    expect(received[0]).toMatchObject({ type: '@xstate.actor', rootId: session.actor.sessionId });
    expect(received.some((e) => e.type === '@xstate.event' && e.event.type === 'xstate.init')).toBe(true);
    session.actor.send({ type: 'CLOSE', reason: 'ended' });
    expect(seen.at(-1)).toEqual({ type: 'session.closed', sessionId: session.sessionId, reason: 'ended' });
    unsubscribe();
  });

  it('a forward (the Stately inspector, a bench probe) keeps every session inspected, without any ops subscriber', async () => {
    const { hub, registry, received, link } = setup();
    const forwarded: InspectionEvent[] = [];
    hub.forward = (event) => forwarded.push(event);
    const { session } = await registry.start(seniors[2]!, link, false);
    session.actor.send({ type: 'TURN', turnId: 't1', transcript: 'Bonjour' });
    expect(forwarded.filter((e) => e.type === '@xstate.snapshot' && e.actorRef === session.actor).length).toBeGreaterThan(0);
    expect(forwarded).toHaveLength(received.length);

    hub.forward = null;
    const before = received.length;
    session.actor.send({ type: 'TURN', turnId: 't2', transcript: 'salut' });
    expect(received).toHaveLength(before);
    registry.closeAll('shutdown');
  });
});

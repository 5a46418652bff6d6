import { describe, expect, it, vi } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import { CacheFluxAdapter, loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { sessionView } from '../../machines/session/session-view.ts';
import { sessionMachine } from '../../machines/session/session.machine.ts';
import { controllableModel, streamingModel } from '../support/models.ts';
import { startSession, until } from '../support/session-harness.ts';

const PAUSE = 60_000;
const conv = (actor: ReturnType<typeof startSession>['actor']) => (actor.getSnapshot().value as { live: { conversation: unknown } }).live.conversation;
/** Timers the actor has pending (XState keeps them in its system snapshot). */
const pendingTimers = (actor: ReturnType<typeof startSession>['actor']) => Object.keys((actor.system.getSnapshot() as { _scheduledEvents: object })._scheduledEvents).length;

describe('CacheFlux hot path (issue 13)', () => {
  it('a hit between turns is answered in place: no state entered, no timer armed; the turn is recorded and in the window', () => {
    const model = streamingModel(['jamais']);
    const { actor, emitted, done } = startSession(model);
    const timers = pendingTimers(actor);
    const before = actor.getSnapshot().value;
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'Bonjour' });
    // Synchronous: answered within the send, before any promise or timer could run.
    expect(done('t1')).toMatchObject({ type: 'reply.done', flux: 'cache', text: 'Bonjour Marie, ravi de vous revoir.' });
    expect(emitted.filter((e) => e.type === 'reply.delta')).toHaveLength(0);
    expect(actor.getSnapshot().value).toEqual(before);
    expect(pendingTimers(actor)).toBe(timers);
    const { context } = actor.getSnapshot();
    expect(context.turns).toEqual([expect.objectContaining({ turnId: 't1', transcript: 'Bonjour', flux: 'cache', interrupted: false })]);
    expect(context.window).toEqual([
      { role: 'user', content: 'Bonjour' },
      { role: 'assistant', content: 'Bonjour Marie, ravi de vous revoir.' },
    ]);
    expect(context.current).toBeNull();
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it('operators and the inspector see every cache turn', () => {
    const snapshots: InspectionEvent[] = [];
    const input = { sessionId: 's1', seniorId: 'senior-1', profile: { preferredName: 'Marie', isFreshSenior: false }, cacheFlux: new CacheFluxAdapter(loadCacheVariations()), turnBudgetMs: 2500, sessionPauseMs: PAUSE, kioskGraceMs: 30_000 };
    const actor = createActor(sessionMachine, { input, inspect: (e) => snapshots.push(e) }).start();
    for (let i = 1; i <= 3; i++) actor.send({ type: 'TURN', turnId: `t${i}`, transcript: 'salut' });
    expect(sessionView(actor.getSnapshot())).toMatchObject({ turnCount: 3, lastTurn: { flux: 'cache', interrupted: false }, currentFlux: null, window: { messages: 6 } });
    const turnEvents = snapshots.filter((e) => e.type === '@xstate.event' && e.event.type === 'TURN');
    expect(turnEvents).toHaveLength(3);
    const counts = snapshots.flatMap((e) => (e.type === '@xstate.snapshot' && e.actorRef === actor ? [(e.snapshot as unknown as { context: { turns: unknown[] } }).context.turns.length] : []));
    expect(counts.slice(-3)).toEqual([1, 2, 3]);
    actor.stop();
  });

  it('a miss goes on to the next flux, CacheFlux asked once', async () => {
    const { actor, done } = startSession(streamingModel(['Je vous écoute.']));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'je suis allée au marché' });
    expect(conv(actor)).toEqual({ turn: expect.anything() });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'agent', text: 'Je vous écoute.' });
    expect(actor.getSnapshot().context.window.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('a hit while an agent turn runs goes through the turn: barge-in, then the cache answers', async () => {
    const model = controllableModel(['Il était ', 'une fois.']);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    actor.send({ type: 'TURN', turnId: 't2', transcript: 'coucou' });
    expect(done('t1')).toMatchObject({ interrupted: true, text: 'Il était ' });
    expect(done('t2')).toMatchObject({ flux: 'cache' });
    expect(conv(actor)).toBe('idle');
    expect(actor.getSnapshot().context.turns.map((t) => t.turnId)).toEqual(['t1', 't2']);
  });

  it('cache turns still fill the window, which folds past its budget', async () => {
    const { actor } = startSession(streamingModel(['x']), undefined, { windowBudget: { maxMessages: 14, maxTokens: 10_000 } });
    for (let i = 1; i <= 8; i++) actor.send({ type: 'TURN', turnId: `t${i}`, transcript: 'bonsoir' });
    await until(() => actor.getSnapshot().context.window.length <= 14 && (actor.getSnapshot().value as { live: { memory: string } }).live.memory === 'steady');
    expect(actor.getSnapshot().context.turns).toHaveLength(8);
  });
});

describe('the pause timer is armed once, not per turn (issue 13)', () => {
  it('turns do not re-arm it; when it fires after turns, it waits out the rest of the pause after the latest', () => {
    const { actor, clock, emitted } = startSession(streamingModel(['x']), undefined, { sessionPauseMs: PAUSE });
    const armed = vi.spyOn(clock, 'setTimeout');
    const cleared = vi.spyOn(clock, 'clearTimeout');
    clock.increment(10_000);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'bonjour' });
    clock.increment(20_000);
    actor.send({ type: 'TURN', turnId: 't2', transcript: 'salut' });
    expect(armed).not.toHaveBeenCalled();
    expect(cleared).not.toHaveBeenCalled();
    // The first arming's end (60 s) passes: re-armed for the rest after t2 (30 s + 60 s = 90 s).
    clock.increment(30_000);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(29_999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
    expect(emitted.find((e) => e.type === 'SessionClosed')).toMatchObject({ reason: 'pause', turns: [{ turnId: 't1' }, { turnId: 't2' }] });
  });

  it('without a turn, it closes at the pause exactly', () => {
    const { actor, clock } = startSession(streamingModel(['x']), undefined, { sessionPauseMs: PAUSE });
    clock.increment(PAUSE - 1);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('a turn just before the end, several re-armings in a row, each from the latest turn', () => {
    const { actor, clock } = startSession(streamingModel(['x']), undefined, { sessionPauseMs: PAUSE });
    for (let i = 1; i <= 3; i++) {
      clock.increment(PAUSE - 1);
      actor.send({ type: 'TURN', turnId: `t${i}`, transcript: 'coucou' });
      expect(actor.getSnapshot().status).toBe('active');
    }
    clock.increment(PAUSE - 1);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('an agent turn (not only a cache hit) counts as the latest turn', async () => {
    const { actor, clock, done } = startSession(streamingModel(['Oui.']), undefined, { sessionPauseMs: PAUSE });
    clock.increment(PAUSE / 2);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'il fait beau aujourd’hui' });
    await until(() => done('t1'));
    clock.increment(PAUSE - 1);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
  });
});

describe('the stall timer is armed once per stall period, not per chunk (issue 13)', () => {
  it('chunks within the bound arm no timer; it fires after the bound from the latest chunk', async () => {
    const model = controllableModel(['Alors, ', 'voilà ', 'la suite', ' et la fin.']);
    const { actor, clock, done } = startSession(model, undefined, { agentStallMs: 1000, replyMaxMs: 60_000 });
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    const armed = vi.spyOn(clock, 'setTimeout');
    clock.increment(400);
    model.release();
    await until(() => actor.getSnapshot().context.current?.chunks === 2);
    clock.increment(400);
    model.release();
    await until(() => actor.getSnapshot().context.current?.chunks === 3);
    expect(armed).not.toHaveBeenCalled();
    // The first arming ends at 1,000 ms: re-armed for what is left after the chunk at 800 ms.
    clock.increment(200);
    expect(done('t1')).toBeUndefined();
    expect(armed).toHaveBeenCalledTimes(1);
    clock.increment(799);
    expect(done('t1')).toBeUndefined();
    clock.increment(1);
    expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'stall' });
  });
});

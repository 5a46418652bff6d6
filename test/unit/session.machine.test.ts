import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { betweenTurns } from '../../machines/session/session.machine.ts';
import { AGENT_CALL_MIN_MS, DEFAULT_AGENT_STALL_MS } from '../../machines/session/session.types.ts';
import { MIN_KEPT_MESSAGES } from '../../machines/session/window.ts';
import { stallAfter } from '../support/fault-models.ts';
import { controllableModel, failingModel, hangingModel, streamingModel, throttledModel } from '../support/models.ts';
import { BUDGET, GRACE, PAUSE, settle, startSession, until } from '../support/session-harness.ts';

const conv = (actor: ReturnType<typeof startSession>['actor']) => (actor.getSnapshot().value as { live: { conversation: unknown } }).live.conversation;

afterEach(() => vi.useRealTimers());

describe('session machine', () => {
  it('answers a greeting from CacheFlux without calling the model', async () => {
    const model = streamingModel(['jamais']);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'Bonjour' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'cache', text: 'Bonjour Marie, ravi de vous revoir.' });
    expect(model.doStreamCalls).toHaveLength(0);
    expect(conv(actor)).toBe('idle');
  });

  it('streams an agent reply as deltas, then done, and keeps both sides in the window', async () => {
    const { actor, emitted, done } = startSession(streamingModel(['Je vous ', 'écoute.']));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'je suis allée au marché' });
    await until(() => done('t1'));
    expect(emitted.filter((e) => e.type === 'reply.delta').map((e) => (e as { text: string }).text)).toEqual(['Je vous ', 'écoute.']);
    expect(done('t1')).toMatchObject({ flux: 'agent', text: 'Je vous écoute.' });
    expect(actor.getSnapshot().context.window.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('measures latency from the turn to its reply', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const { actor, done } = startSession(streamingModel(['Oui.']));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'il fait beau' });
    vi.setSystemTime(1_000_042);
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ latencyMs: 42 });
  });

  it('falls back to SOS when the budget expires before the first chunk, and aborts the model call', async () => {
    const model = hangingModel();
    const { actor, clock, done, emitted } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
    await until(() => model.doStreamCalls.length === 1);
    clock.increment(BUDGET - 1);
    expect(done('t1')).toBeUndefined();
    clock.increment(1);
    expect(done('t1')).toMatchObject({ flux: 'sos', text: 'Bien sûr, je vous écoute.' });
    await until(() => model.state.aborted === 1);
    expect(emitted.filter((e) => e.type === 'reply.delta')).toHaveLength(0);
    expect(actor.getSnapshot().context.turns[0]).toMatchObject({ flux: 'sos', sosReason: 'budget' });
  });

  it('does not cut a reply that started streaming within the budget and keeps its chunks coming', async () => {
    const model = controllableModel(['Alors, ', 'voilà ', "l'histoire."]);
    const { actor, clock, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    // Each gap stays under the stall bound while the whole reply outlasts the turn budget.
    clock.increment(DEFAULT_AGENT_STALL_MS - 1);
    model.release();
    await until(() => actor.getSnapshot().context.current?.chunks === 2);
    clock.increment(DEFAULT_AGENT_STALL_MS - 1);
    expect(done('t1')).toBeUndefined();
    model.release();
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'agent', text: "Alors, voilà l'histoire." });
  });

  it('retries a failing model once, then answers', async () => {
    const model = failingModel(1, ['Me revoilà.']);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'tu es là ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'agent', text: 'Me revoilà.' });
    expect(model.doStreamCalls).toHaveLength(2);
  });

  it('falls back to SOS when the retry fails too', async () => {
    const model = failingModel(2);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'tu es là ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'sos' });
    expect(actor.getSnapshot().context.turns[0]!.sosReason).toBe('model_error');
    expect(model.doStreamCalls).toHaveLength(2);
  });

  it('treats an empty model reply as a failure: never silence', async () => {
    const { actor, done } = startSession(streamingModel([]));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'dis quelque chose' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'sos', text: 'Bien sûr, je vous écoute.' });
  });

  it('barge-in aborts the reply, keeps only what was sent, flagged interrupted; the next turn works', async () => {
    const model = controllableModel(['Il était ', 'une fois ', 'un roi.']);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    actor.send({ type: 'INTERRUPT', turnId: 'other' });
    expect(done('t1')).toBeUndefined();
    actor.send({ type: 'INTERRUPT', turnId: 't1' });
    expect(done('t1')).toMatchObject({ interrupted: true, text: 'Il était ' });
    expect(actor.getSnapshot().context.window.at(-1)).toEqual({ role: 'assistant', content: 'Il était ', interrupted: true });
    model.release();
    await settle();
    expect(actor.getSnapshot().context.turns).toHaveLength(1);
    actor.send({ type: 'TURN', turnId: 't2', transcript: 'bonsoir' });
    await until(() => done('t2'));
    expect(done('t2')).toMatchObject({ flux: 'cache' });
  });

  it('a new turn during a reply interrupts it and answers the new one', async () => {
    const model = controllableModel(['Il était ', 'une fois.']);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    actor.send({ type: 'TURN', turnId: 't2', transcript: 'salut' });
    await until(() => done('t2'));
    expect(done('t1')).toMatchObject({ interrupted: true });
    expect(done('t2')).toMatchObject({ flux: 'cache' });
  });

  it('a recall that ends the turn itself (neutral reply) skips the agent', async () => {
    const model = streamingModel(['jamais']);
    const { actor, done } = startSession(model, async () => ({ kind: 'reply', text: 'Je suis là pour discuter avec vous.', flux: 'neutral' }));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'tu te souviens de ma fille ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'neutral' });
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it('a failing recall never blocks the turn: the agent answers without facts', async () => {
    const { actor, done } = startSession(streamingModel(['Oui.']), async () => {
      throw new Error('recall down');
    });
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'tu te souviens ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'agent' });
  });

  it('closes after SESSION_PAUSE_MS without a turn, emitting SessionClosed with the turns', async () => {
    const { actor, clock, emitted } = startSession(streamingModel(['Oui.']));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'bonjour' });
    await until(() => conv(actor) === 'idle' && actor.getSnapshot().context.turns.length === 1);
    clock.increment(PAUSE - 1);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
    const closed = emitted.find((e) => e.type === 'SessionClosed');
    expect(closed).toMatchObject({ reason: 'pause', sessionId: 's1', seniorId: 'senior-1', turns: [{ turnId: 't1', transcript: 'bonjour', flux: 'cache' }] });
  });

  it('a lost socket waits out the grace period, then closes as disconnected', async () => {
    const { actor, clock, emitted } = startSession(streamingModel(['Oui.']));
    actor.send({ type: 'SOCKET.LOST' });
    clock.increment(GRACE - 1);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(emitted.find((e) => e.type === 'SessionClosed')).toMatchObject({ reason: 'disconnected' });
  });

  it('a socket re-attached within grace keeps the session', async () => {
    const { actor, clock } = startSession(streamingModel(['Oui.']));
    actor.send({ type: 'SOCKET.LOST' });
    clock.increment(GRACE - 1);
    actor.send({ type: 'SOCKET.ATTACHED' });
    clock.increment(GRACE);
    expect(actor.getSnapshot().status).toBe('active');
  });

  it('CLOSE during a reply records it as interrupted, aborts the model and emits one SessionClosed', async () => {
    const model = hangingModel();
    const { actor, emitted } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte' });
    await until(() => model.doStreamCalls.length === 1);
    actor.send({ type: 'CLOSE', reason: 'ended' });
    await until(() => model.state.aborted === 1);
    const closed = emitted.filter((e) => e.type === 'SessionClosed');
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ reason: 'ended', turns: [{ turnId: 't1', interrupted: true }] });
    expect(actor.getSnapshot().status).toBe('done');
  });
  describe('a shutdown with a turn in flight', () => {
    it('before any chunk, ends the turn with the SOS line (reason shutdown), never an empty reply.done', async () => {
      const model = hangingModel();
      const { actor, emitted, done, heard } = startSession(model);
      actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi ta journée' });
      await until(() => model.doStreamCalls.length === 1);
      actor.send({ type: 'CLOSE', reason: 'shutdown' });
      await until(() => model.state.aborted === 1);
      expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'shutdown', text: 'Bien sûr, je vous écoute.' });
      expect(heard('t1')).toBe('');
      expect(emitted.filter((e) => e.type === 'reply.done')).toHaveLength(1);
      const closed = emitted.filter((e) => e.type === 'SessionClosed');
      expect(closed).toEqual([expect.objectContaining({ reason: 'shutdown', turns: [expect.objectContaining({ turnId: 't1', flux: 'sos', reply: 'Bien sûr, je vous écoute.' })] })]);
      // The kiosk hears the line before the session's close.
      expect(emitted.findIndex((e) => e.type === 'reply.done')).toBeLessThan(emitted.findIndex((e) => e.type === 'SessionClosed'));
    });

    it('mid-reply, what was said is followed by the closing line, and reply.done is exactly what was heard', async () => {
      const model = stallAfter(['Il était une fois ']);
      const { actor, done, heard } = startSession(model);
      actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
      await until(() => heard('t1') === 'Il était une fois ');
      actor.send({ type: 'CLOSE', reason: 'shutdown' });
      const reply = done('t1') as { text: string; flux: string; sosReason?: string };
      expect(reply).toMatchObject({ flux: 'sos', sosReason: 'shutdown' });
      expect(reply.text).toBe(heard('t1'));
      expect(reply.text).toBe('Il était une fois … Pardon, je perds le fil. Je vous écoute.');
    });

    it('any other close keeps only what the kiosk received, flagged interrupted', async () => {
      const model = stallAfter(['Il était ']);
      const { actor, done, heard } = startSession(model);
      actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi une histoire' });
      await until(() => heard('t1') === 'Il était ');
      actor.send({ type: 'CLOSE', reason: 'operator' });
      expect(done('t1')).toMatchObject({ flux: 'agent', interrupted: true, text: 'Il était ' });
    });
  });
});

describe('the provider’s Retry-After (the agent’s pause)', () => {
  const SOS = 'Bien sûr, je vous écoute.';
  // The pause runs on Date and setTimeout; the machine's own timers on its simulated clock.
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] }));

  it('a 429 ends the turn on the SOS line at once (rate_limited), without the quick retry, and pauses the agent for its Retry-After', async () => {
    const model = throttledModel('1');
    const { actor, done, agentPause } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'quelle heure est-il ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'sos', text: SOS, latencyMs: 0 });
    expect(actor.getSnapshot().context.turns[0]!.sosReason).toBe('rate_limited');
    expect(model.doStreamCalls).toHaveLength(1);
    expect(agentPause.leftMs).toBe(1000);
  });

  it(`while the pause ends ${AGENT_CALL_MIN_MS} ms or more before the turn's budget does, the call waits for its end, then the agent answers`, async () => {
    const model = streamingModel(['Il est midi.']);
    const { actor, done, agentPause } = startSession(model);
    agentPause.note(BUDGET - AGENT_CALL_MIN_MS);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'quelle heure est-il ?' });
    await vi.advanceTimersByTimeAsync(BUDGET - AGENT_CALL_MIN_MS - 1);
    await settle();
    expect(model.doStreamCalls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'agent', text: 'Il est midi.' });
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('while the pause ends later than that, the SOS line comes at once (rate_limited) and no call is made', async () => {
    const model = streamingModel(['jamais']);
    const { actor, done, agentPause } = startSession(model);
    agentPause.note(BUDGET - AGENT_CALL_MIN_MS + 1);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'quelle heure est-il ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'sos', text: SOS, latencyMs: 0 });
    expect(actor.getSnapshot().context.turns[0]!.sosReason).toBe('rate_limited');
    expect(model.doStreamCalls).toHaveLength(0);
  });
});

describe('betweenTurns: the snapshot a preemptive turn may start from', () => {
  it('holds between turns; not while a turn runs, nor while the window is folded, nor once closed', async () => {
    const model = controllableModel(['Je vous ', 'écoute.']);
    let fold: (summary: string | null) => void = () => {};
    const summarize = () => new Promise<string | null>((resolve) => (fold = resolve));
    // Every window past the floor overflows: the turn that crosses it starts a fold.
    const { actor, done } = startSession(model, undefined, { windowBudget: { maxMessages: MIN_KEPT_MESSAGES, maxTokens: 1 } }, summarize);
    expect(betweenTurns(actor.getSnapshot())).toBe(true);

    actor.send({ type: 'TURN', turnId: 't1', transcript: 'je suis allée au marché' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    expect(betweenTurns(actor.getSnapshot())).toBe(false);
    model.release();
    await until(() => done('t1'));
    expect(betweenTurns(actor.getSnapshot())).toBe(true);

    // CacheFlux's greetings, two messages each, up to the floor and past it.
    for (let i = 2; actor.getSnapshot().context.window.length <= MIN_KEPT_MESSAGES; i++) actor.send({ type: 'TURN', turnId: `t${i}`, transcript: 'Bonjour' });
    expect(actor.getSnapshot().matches({ live: { memory: 'folding' } })).toBe(true);
    expect(betweenTurns(actor.getSnapshot())).toBe(false);
    fold('Elle est allée au marché.');
    await until(() => actor.getSnapshot().matches({ live: { memory: 'steady' } }));
    expect(betweenTurns(actor.getSnapshot())).toBe(true);

    actor.send({ type: 'CLOSE', reason: 'ended' });
    expect(betweenTurns(actor.getSnapshot())).toBe(false);
  });
});

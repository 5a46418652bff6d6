import { describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_STALL_MS, DEFAULT_REPLY_MAX_MS } from '../../machines/session/session.types.ts';
import { breakAfter, endlessModel, stallAfter } from '../support/fault-models.ts';
import { hangingModel, streamingModel } from '../support/models.ts';
import { BUDGET, startSession, until } from '../support/session-harness.ts';

const CLOSING = '… Pardon, je perds le fil. Je vous écoute.';

describe('every turn ends (issue 10: a stream that stalls after its first chunk hung the turn for good)', () => {
  it('a model that stalls after its first chunk: at AGENT_STALL_MS the turn ends as the senior heard it', async () => {
    const model = stallAfter(['Je vous ']);
    const { actor, clock, done, heard } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte-moi ta journée' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    clock.increment(DEFAULT_AGENT_STALL_MS - 1);
    expect(done('t1')).toBeUndefined();
    clock.increment(1);
    expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'stall', text: `Je vous ${CLOSING}` });
    // Captions, window and close-time jobs agree with what was spoken.
    expect(heard('t1')).toBe((done('t1') as { text: string }).text);
    expect(actor.getSnapshot().context.window.at(-1)).toEqual({ role: 'assistant', content: `Je vous ${CLOSING}` });
    await until(() => model.state.aborted === 1);
  });

  it('the stall bound restarts with every chunk, so a slow but steady reply is not cut', async () => {
    const model = endlessModel();
    const { actor, clock, done } = startSession(model, undefined, { replyMaxMs: 60_000 });
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte une longue histoire' });
    await until(() => model.doStreamCalls.length === 1);
    for (let i = 1; i <= 10; i++) {
      model.tick();
      await until(() => actor.getSnapshot().context.current?.chunks === i);
      clock.increment(DEFAULT_AGENT_STALL_MS - 1);
    }
    expect(done('t1')).toBeUndefined();
    clock.increment(1);
    expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'stall' });
  });

  it('a reply that never ends is cut at REPLY_MAX_MS, ended as heard, and the model call aborted', async () => {
    const model = endlessModel();
    const { actor, clock, done, heard } = startSession(model);
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte une histoire sans fin' });
    await until(() => model.doStreamCalls.length === 1);
    let elapsed = 0;
    for (let i = 1; elapsed + 1000 < DEFAULT_REPLY_MAX_MS; i++) {
      model.tick();
      await until(() => actor.getSnapshot().context.current?.chunks === i);
      clock.increment(1000);
      elapsed += 1000;
    }
    expect(done('t1')).toBeUndefined();
    clock.increment(DEFAULT_REPLY_MAX_MS - elapsed);
    expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'stall' });
    expect(heard('t1')).toBe((done('t1') as { text: string }).text);
    expect(heard('t1').endsWith(CLOSING)).toBe(true);
    await until(() => model.state.aborted === 1);
  });

  it('a stream that dies mid-reply: reply.done carries what the kiosk received plus the closing line, not the bare SOS text', async () => {
    const { actor, done, heard } = startSession(breakAfter(['Je vous ']));
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'tu es là ?' });
    await until(() => done('t1'));
    expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'model_error', text: `Je vous ${CLOSING}` });
    expect(heard('t1')).toBe(`Je vous ${CLOSING}`);
  });

  it('before any chunk, the budget still gives the SOS line alone (no delta)', async () => {
    const { actor, clock, done, heard } = startSession(hangingModel());
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'allô ?' });
    clock.increment(BUDGET);
    expect(done('t1')).toMatchObject({ flux: 'sos', sosReason: 'budget', text: 'Bien sûr, je vous écoute.' });
    expect(heard('t1')).toBe('');
  });

  it('the pause timer runs whatever the conversation is doing: a turn still streaming is closed at SESSION_PAUSE_MS', async () => {
    const model = endlessModel();
    const pause = 60_000;
    const { actor, clock, emitted } = startSession(model, undefined, { sessionPauseMs: pause, replyMaxMs: 10 * pause });
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'raconte' });
    await until(() => model.doStreamCalls.length === 1);
    // A chunk every second: the reply never stalls, and never ends by itself.
    for (let second = 1; second <= pause / 1000; second++) {
      model.tick();
      await until(() => actor.getSnapshot().context.current?.chunks === second);
      if (second < pause / 1000) clock.increment(1000);
    }
    clock.increment(999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
    expect(emitted.find((e) => e.type === 'SessionClosed')).toMatchObject({ reason: 'pause', turns: [{ turnId: 't1', interrupted: true }] });
    await until(() => model.state.aborted === 1);
  });

  it('the pause counts from the last turn, not from the last idle entry', async () => {
    const pause = 60_000;
    const { actor, clock } = startSession(streamingModel(['Oui.']), undefined, { sessionPauseMs: pause });
    actor.send({ type: 'TURN', turnId: 't1', transcript: 'bonjour' });
    clock.increment(pause - 1);
    actor.send({ type: 'TURN', turnId: 't2', transcript: 'salut' });
    clock.increment(pause - 1);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().status).toBe('done');
  });
});

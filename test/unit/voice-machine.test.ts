import { describe, expect, it } from 'vitest';
import { redactEvent, sessionView } from '../../machines/session/session-view.ts';
import { controllableModel, streamingModel } from '../support/models.ts';
import { startSession, until } from '../support/session-harness.ts';

const REPLY = ['Le marché est ouvert. ', 'Il ferme à midi. ', 'Prenez un panier.'];

describe('session machine, voice mode: the window keeps what the senior heard', () => {
  it('an interrupt after the reply completed cuts its turn and window message to the heard text, flagged interrupted', async () => {
    const { actor, done } = startSession(streamingModel(REPLY));
    actor.send({ type: 'TURN', turnId: 'v1', transcript: 'le marché est ouvert ?' });
    await until(() => done('v1'));
    actor.send({ type: 'INTERRUPT', turnId: 'v1', heard: 'Le marché est ouvert.' });
    const { window, turns } = actor.getSnapshot().context;
    expect(window.at(-1)).toEqual({ role: 'assistant', content: 'Le marché est ouvert.', interrupted: true });
    expect(turns.at(-1)).toMatchObject({ turnId: 'v1', reply: 'Le marché est ouvert.', interrupted: true });
  });

  it('nothing heard: the reply leaves the window; the turn is kept, empty and interrupted', async () => {
    const { actor, done } = startSession(streamingModel(REPLY));
    actor.send({ type: 'TURN', turnId: 'v1', transcript: 'le marché est ouvert ?' });
    await until(() => done('v1'));
    actor.send({ type: 'INTERRUPT', turnId: 'v1', heard: '' });
    const { window, turns } = actor.getSnapshot().context;
    expect(window.map((m) => m.role)).toEqual(['user']);
    expect(turns.at(-1)).toMatchObject({ reply: '', interrupted: true });
  });

  it('a "heard" text that is not a strict prefix of the reply, or an older turn, changes nothing', async () => {
    const { actor, done } = startSession(streamingModel(REPLY));
    actor.send({ type: 'TURN', turnId: 'v1', transcript: 'le marché est ouvert ?' });
    await until(() => done('v1'));
    const before = actor.getSnapshot().context;
    actor.send({ type: 'INTERRUPT', turnId: 'v1', heard: 'Le marché est fermé.' });
    actor.send({ type: 'INTERRUPT', turnId: 'v1', heard: `${REPLY.join('')} et plus encore` });
    actor.send({ type: 'INTERRUPT', turnId: 'v0', heard: '' });
    expect(actor.getSnapshot().context.window).toEqual(before.window);
    expect(actor.getSnapshot().context.turns).toEqual(before.turns);
  });

  it('an interrupt while the reply still streams ends the turn with the heard text, not all the text received', async () => {
    const model = controllableModel(REPLY);
    const { actor, done } = startSession(model);
    actor.send({ type: 'TURN', turnId: 'v1', transcript: 'le marché est ouvert ?' });
    await until(() => actor.getSnapshot().context.current?.chunks === 1);
    model.release();
    await until(() => actor.getSnapshot().context.current?.chunks === 2);
    actor.send({ type: 'INTERRUPT', turnId: 'v1', heard: 'Le marché est ouvert.' });
    expect(done('v1')).toMatchObject({ text: 'Le marché est ouvert.', interrupted: true });
    expect(actor.getSnapshot().context.window.at(-1)).toEqual({ role: 'assistant', content: 'Le marché est ouvert.', interrupted: true });
  });
});

describe('voice state in the ops view and the inspector', () => {
  it('VOICE.STATE moves the voice region; the view shows the state and stage timings, never text', () => {
    const { actor } = startSession(streamingModel(['Oui.']));
    expect(sessionView(actor.getSnapshot()).voice).toEqual({ state: 'off', stages: null });
    actor.send({ type: 'VOICE.STATE', state: 'user_speaking' });
    expect(sessionView(actor.getSnapshot()).voice.state).toBe('user_speaking');
    const stages = { turnId: 'v1', endpointingMs: 310, transcriptionMs: 120, firstTokenMs: 240, firstAudioMs: 420 };
    actor.send({ type: 'VOICE.STATE', state: 'speaking', stages });
    expect(sessionView(actor.getSnapshot()).voice).toEqual({ state: 'speaking', stages });
    expect(sessionView(actor.getSnapshot()).state).toContain('voice.speaking');
    actor.send({ type: 'SOCKET.LOST' });
    expect(sessionView(actor.getSnapshot()).voice.state).toBe('off');
  });

  it('the inspector sees voice states and timings, and only the length of a heard text', () => {
    expect(redactEvent({ type: 'VOICE.STATE', state: 'thinking', stages: { turnId: 'v2', transcriptionMs: 90 } })).toEqual({ type: 'VOICE.STATE', state: 'thinking', stages: { turnId: 'v2', transcriptionMs: 90 } });
    expect(redactEvent({ type: 'INTERRUPT', turnId: 'v2', heard: 'Le marché est ouvert.' })).toEqual({ type: 'INTERRUPT', turnId: 'v2', heardLength: 21 });
    // A text smuggled into the stages is not shown.
    expect(redactEvent({ type: 'VOICE.STATE', state: 'thinking', stages: { turnId: 'v2', note: 'un secret' } })).toEqual({ type: 'VOICE.STATE', state: 'thinking', stages: '[redacted]' });
  });
});

import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { CacheFluxAdapter, loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { sessionMachine } from '../../machines/session/session.machine.ts';
import type { VoiceStages } from '../../machines/session/session.types.ts';
import { InspectionHub, type OpsEvent } from '../../runtime/ops/inspection-hub.ts';

/** A real session actor inspected by the real hub, as the registry wires it; one operator subscribed. */
function watchedSession() {
  const hub = new InspectionHub();
  const seen: OpsEvent[] = [];
  hub.subscribe((event) => seen.push(event));
  const actor = createActor(sessionMachine, {
    inspect: hub.observe,
    input: {
      sessionId: 'ops-hub-1',
      seniorId: 'senior-1',
      profile: { preferredName: 'Marie', isFreshSenior: false },
      cacheFlux: new CacheFluxAdapter(loadCacheVariations()),
      turnBudgetMs: 2500,
      sessionPauseMs: 600_000,
      kioskGraceMs: 30_000,
    },
  }).start();
  const voices = () => seen.flatMap((e) => (e.type === 'session.update' ? [e.session.voice] : []));
  return { actor, voices };
}

describe('ops stream: voice state and stage timings (InspectionHub)', () => {
  it('publishes each voice state with its stages, and new stage timings even when the voice state stays the same', () => {
    const { actor, voices } = watchedSession();
    const first: VoiceStages = { turnId: 'v1', endpointingMs: 310, transcriptionMs: 42 };
    actor.send({ type: 'VOICE.STATE', state: 'listening' });
    actor.send({ type: 'VOICE.STATE', state: 'thinking', stages: first });
    actor.send({ type: 'VOICE.STATE', state: 'speaking', stages: { ...first, firstTokenMs: 35, firstAudioMs: 120 } });
    // An SOS line cutting a reply still playing: still `speaking`, but another turn's timings.
    actor.send({ type: 'VOICE.STATE', state: 'speaking', stages: { turnId: 'v2', firstTokenMs: 0, firstAudioMs: 3 } });
    expect(voices()).toEqual([
      { state: 'off', stages: null },
      { state: 'listening', stages: null },
      { state: 'thinking', stages: first },
      { state: 'speaking', stages: { ...first, firstTokenMs: 35, firstAudioMs: 120 } },
      { state: 'speaking', stages: { turnId: 'v2', firstTokenMs: 0, firstAudioMs: 3 } },
    ]);
    // The same state with the same timings is not published twice.
    actor.send({ type: 'VOICE.STATE', state: 'speaking' });
    expect(voices()).toHaveLength(5);
    actor.stop();
  });
});

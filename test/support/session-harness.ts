import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { AgentFluxAdapter } from '../../adapters/fluxes/agent-flux.adapter.ts';
import { CacheFluxAdapter, loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { ProviderPause } from '../../adapters/mistral/retry-after.ts';
import type { RecallOutcome } from '../../machines/session/ports.ts';
import { agentReplyLogic } from '../../machines/session/session.actors.ts';
import { sessionMachine } from '../../machines/session/session.machine.ts';
import type { SessionEmitted, SessionInput } from '../../machines/session/session.types.ts';

export const BUDGET = 2500;
export const PAUSE = 3_600_000;
export const GRACE = 30_000;
const variations = loadCacheVariations();

/**
 * One session actor on a simulated clock, its agent the real AgentFluxAdapter over `model`; every
 * emitted event recorded. The adapter and the machine share `agentPause`, the provider's Retry-After.
 */
export function startSession(model: LanguageModelV4, recall?: () => Promise<RecallOutcome>, input: Partial<SessionInput> = {}, summarize?: () => Promise<string | null>) {
  const clock = new SimulatedClock();
  const agentPause = new ProviderPause();
  const machine = sessionMachine.provide({
    actors: {
      agentReply: agentReplyLogic(new AgentFluxAdapter(model, undefined, undefined, agentPause)),
      ...(recall ? { recall: fromPromise(recall) } : {}),
      ...(summarize ? { summarizeWindow: fromPromise(summarize) } : {}),
    },
  });
  const actor = createActor(machine, {
    clock,
    input: {
      sessionId: 's1',
      seniorId: 'senior-1',
      profile: { preferredName: 'Marie', isFreshSenior: false },
      cacheFlux: new CacheFluxAdapter(variations),
      turnBudgetMs: BUDGET,
      sessionPauseMs: PAUSE,
      kioskGraceMs: GRACE,
      agentPause,
      ...input,
    },
  });
  const emitted: SessionEmitted[] = [];
  for (const type of ['reply.delta', 'reply.done', 'SessionClosed'] as const) actor.on(type, (e) => emitted.push(e));
  actor.start();
  const done = (turnId: string) => emitted.find((e) => e.type === 'reply.done' && e.turnId === turnId);
  /** The text of every `reply.delta` of a turn, in order: what the kiosk played. */
  const heard = (turnId: string) =>
    emitted
      .filter((e) => e.type === 'reply.delta' && e.turnId === turnId)
      .map((e) => (e as { text: string }).text)
      .join('');
  return { actor, clock, emitted, done, heard, agentPause };
}

/**
 * Lets the model's promises and streams run until `check` holds. It yields to the event
 * loop only: no timer is advanced, so the machine's clock stays where the test put it.
 */
export async function until(check: () => unknown) {
  for (let i = 0; i < 10_000; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('condition never held');
}
export const settle = () => until(() => true).then(() => new Promise((r) => setImmediate(r)));

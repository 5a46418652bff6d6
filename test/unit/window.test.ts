import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { AgentFluxAdapter } from '../../adapters/fluxes/agent-flux.adapter.ts';
import { CacheFluxAdapter, loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { MistralSmallWindowSummarizer } from '../../adapters/subagents/mistral-small-window-summarizer.ts';
import { agentReplyLogic, windowSummaryLogic } from '../../machines/session/session.actors.ts';
import { sessionMachine } from '../../machines/session/session.machine.ts';
import { foldCount, MIN_KEPT_MESSAGES, overflows } from '../../machines/session/window.ts';
import { scriptedModel, streamingModel, systemPromptOf } from '../support/models.ts';

const budget = { maxMessages: 14, maxTokens: 100_000 };

function session(summarizer: ReturnType<typeof scriptedModel>) {
  const agent = streamingModel(['D’accord.']);
  const machine = sessionMachine.provide({
    actors: { agentReply: agentReplyLogic(new AgentFluxAdapter(agent)), summarizeWindow: windowSummaryLogic(new MistralSmallWindowSummarizer(summarizer)) },
  });
  const actor = createActor(machine, {
    clock: new SimulatedClock(),
    input: {
      sessionId: 's',
      seniorId: 'senior',
      profile: { preferredName: 'Marie', isFreshSenior: false },
      cacheFlux: new CacheFluxAdapter(loadCacheVariations()),
      turnBudgetMs: 2500,
      sessionPauseMs: 3_600_000,
      kioskGraceMs: 30_000,
      windowBudget: budget,
    },
  }).start();
  return { actor, agent };
}

async function settle(check: () => boolean) {
  for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

async function talk(actor: ReturnType<typeof session>['actor'], n: number, from = 0) {
  for (let i = from; i < from + n; i++) {
    actor.send({ type: 'TURN', turnId: `t${i}`, transcript: `je vous raconte le souvenir numéro ${i}` });
    await settle(() => actor.getSnapshot().context.turns.length === i + 1);
  }
}

describe('tier 1: the live window and its running summary', () => {
  it('folds the oldest half only past the budget, never below 12 messages', () => {
    const messages = (n: number) => Array.from({ length: n }, (_, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `m${i}` }));
    expect(overflows(messages(14), budget)).toBe(false);
    expect(overflows(messages(15), budget)).toBe(true);
    expect(overflows(messages(13), { maxMessages: 14, maxTokens: 1 })).toBe(true);
    expect(overflows(messages(12), { maxMessages: 2, maxTokens: 1 })).toBe(false);
    expect(foldCount(messages(15))).toBe(3);
    expect(foldCount(messages(40))).toBe(20);
  });

  it('summarizes the oldest messages with Mistral Small into a running summary the agent sees before the window', async () => {
    const summarizer = scriptedModel({ json: { summary: 'Marie a raconté ses premiers souvenirs.' } });
    const { actor, agent } = session(summarizer);
    await talk(actor, 8);
    await settle(() => actor.getSnapshot().context.runningSummary !== null);
    const { context } = actor.getSnapshot();
    expect(context.runningSummary).toBe('Marie a raconté ses premiers souvenirs.');
    expect(context.window.length).toBeGreaterThanOrEqual(MIN_KEPT_MESSAGES);
    expect(context.window[0]!.content).not.toContain('numéro 0');
    expect(JSON.stringify(summarizer.doGenerateCalls[0]!.prompt)).toContain('numéro 0');
    await talk(actor, 1, 8);
    const system = systemPromptOf(agent);
    expect(system).toContain('Plus tôt dans cette conversation : Marie a raconté ses premiers souvenirs.');
    expect(context.turns).toHaveLength(8);
  });

  it('keeps the window bounded when the summarizer fails, and the previous summary stays', async () => {
    const { actor } = session(scriptedModel({ status: 400 }));
    await talk(actor, 12);
    await settle(() => (actor.getSnapshot().value as { live: { memory: string } }).live.memory === 'steady');
    const { context } = actor.getSnapshot();
    expect(context.window.length).toBeLessThanOrEqual(budget.maxMessages);
    expect(context.window.length).toBeGreaterThanOrEqual(MIN_KEPT_MESSAGES);
    expect(context.runningSummary).toBeNull();
  });
});

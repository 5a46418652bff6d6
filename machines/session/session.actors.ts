import { fromCallback, fromPromise } from 'xstate';
import {
  AgentThrottledError,
  type AgentPort,
  type AgentRequest,
  type CacheLookup,
  type RecallOutcome,
  type RecallPort,
  type SemanticCachePort,
  type WindowSummarizerPort,
} from './ports.ts';
import type { SessionEvent } from './session.types.ts';

/** Wraps an AgentPort as the callback actor the machine invokes; stopping it aborts the call. */
export function agentReplyLogic(agent: AgentPort) {
  return fromCallback<SessionEvent, AgentRequest>(({ sendBack, input }) => {
    const controller = new AbortController();
    void (async () => {
      try {
        for await (const chunk of agent.stream(input, controller.signal)) {
          if (controller.signal.aborted) return;
          if (chunk.type === 'tool') sendBack({ type: 'AGENT.TOOL', name: chunk.name });
          else if (chunk.text) sendBack({ type: 'AGENT.CHUNK', text: chunk.text });
        }
        if (!controller.signal.aborted) sendBack({ type: 'AGENT.DONE' });
      } catch (err) {
        if (!controller.signal.aborted) sendBack({ type: 'AGENT.FAILED', throttled: err instanceof AgentThrottledError });
      }
    })();
    return () => controller.abort();
  });
}

/** Wraps a SemanticCachePort as the promise actor the machine invokes. */
export function semanticCacheLogic(cache: SemanticCachePort) {
  return fromPromise<CacheLookup, Parameters<SemanticCachePort['lookup']>[0]>(({ input, signal }) => cache.lookup(input, signal));
}

/** Wraps a RecallPort as the promise actor the machine invokes; leaving the state aborts it. */
export function recallLogic(recall: RecallPort) {
  return fromPromise<RecallOutcome, { seniorId: string; transcript: string }>(({ input, signal }) => recall.recall(input, signal));
}

/** Wraps a WindowSummarizerPort as the promise actor the machine invokes to fold its window. */
export function windowSummaryLogic(summarizer: WindowSummarizerPort) {
  return fromPromise<string | null, Parameters<WindowSummarizerPort['summarize']>[0]>(({ input, signal }) => summarizer.summarize(input, signal));
}

export const noFacts = fromPromise<RecallOutcome, { seniorId: string; transcript: string }>(async () => ({ kind: 'facts', facts: [] }));
export const noCache = fromPromise<CacheLookup, Parameters<SemanticCachePort['lookup']>[0]>(async () => ({ kind: 'bypass' }));
export const agentNotProvided = fromCallback<SessionEvent, AgentRequest>(({ sendBack }) => {
  sendBack({ type: 'AGENT.FAILED' });
});

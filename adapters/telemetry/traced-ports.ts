import type { ConsentPort, MemoryPort } from '../../machines/memory/memory.port.ts';
import type { CacheFluxPort, RecallPort, SemanticCachePort } from '../../machines/session/ports.ts';
import { SPANS, type TurnTraces } from './turn-traces.ts';

/**
 * The turn's ports, each call in a span of the senior's running turn. They wrap the ports the session
 * machine is given (and, for recall's queries, the ones recall is given): the machine never sees
 * OpenTelemetry. Attributes are outcomes and counts; the inputs (a transcript, a question) never go in.
 */

/** Flux 1, per session: synchronous and in memory, its span is a hit or a miss. */
export function tracedCacheFlux(inner: CacheFluxPort, seniorId: string, traces: TurnTraces): CacheFluxPort {
  return {
    resolve(transcript, profile) {
      const span = traces.startStage(seniorId, SPANS.cacheFlux);
      const reply = inner.resolve(transcript, profile);
      span?.setAttribute('kohami.cacheflux.hit', reply !== null);
      span?.end();
      return reply;
    },
    sosFallback: () => inner.sosFallback(),
    sosAfterPartial: () => inner.sosAfterPartial(),
  };
}

/** Flux 2: its consent check and memory search are its children (`tracedConsents`, `tracedMemory`). */
export function tracedRecall(inner: RecallPort, traces: TurnTraces): RecallPort {
  return {
    recall: (input, signal) =>
      traces.stage(
        input.seniorId,
        SPANS.recall,
        () => inner.recall(input, signal),
        (outcome) => (outcome.kind === 'facts' ? { 'kohami.recall.outcome': 'facts', 'kohami.recall.facts': outcome.facts.length } : { 'kohami.recall.outcome': outcome.flux }),
      ),
  };
}

export function tracedSemanticCache(inner: SemanticCachePort, traces: TurnTraces): SemanticCachePort {
  return {
    lookup: (input, signal) => traces.stage(input.seniorId, SPANS.semanticCache, () => inner.lookup(input, signal), (found) => ({ 'kohami.semantic_cache.result': found.kind })),
  };
}

/** Recall's consent query. */
export function tracedConsents(inner: ConsentPort, traces: TurnTraces): ConsentPort {
  return {
    hasConsent: (seniorId, category, signal) =>
      traces.stage(seniorId, SPANS.consent, () => inner.hasConsent(seniorId, category, signal), (granted) => ({ 'kohami.consent.category': category, 'kohami.consent.granted': granted })),
    activeCategories: (seniorId) => inner.activeCategories(seniorId),
  };
}

/** Recall's memory search (the question's embedding and the vector query). */
export function tracedMemory(inner: MemoryPort, traces: TurnTraces): MemoryPort {
  return {
    persist: (fact) => inner.persist(fact),
    invalidate: (seniorId, factId) => inner.invalidate(seniorId, factId),
    search: (query, seniorId, limit, signal) =>
      traces.stage(seniorId, SPANS.search, () => inner.search(query, seniorId, limit, signal), (facts) => ({ 'kohami.recall.limit': limit, 'kohami.recall.facts': facts.length })),
    deleteSenior: (seniorId) => inner.deleteSenior(seniorId),
  };
}

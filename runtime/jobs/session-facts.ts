import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { HELD_FACTS_SHOWN } from '../../adapters/subagents/mistral-small-memory-extractor.ts';
import type { Exchange, FactOperation, MemoryExtractorPort } from '../../machines/memory/derivation.ts';
import type { MemoryPort } from '../../machines/memory/memory.port.ts';

export interface FactsReconciled {
  added: number;
  updated: number;
  invalidated: number;
  /** Facts the session confirmed (`none`), and new ones the store found already held. */
  unchanged: number;
}

/** What the session's fact reconciliation works with. */
export interface SessionFactsDeps {
  extractor: MemoryExtractorPort;
  facts: Pick<PgMemoryFactsRepository, 'known'>;
  memory: MemoryPort;
  logger: Pick<Logger, 'debug'>;
}

/**
 * A closed session's facts, reconciled with what the senior's memory already holds (Mem0's
 * ADD / UPDATE / DELETE / NOOP): the extractor is shown the senior's valid facts of the categories
 * whose consent is active — the ones recall may use — and says, per fact, add, update (which held
 * fact it supersedes), invalidate or nothing. The store's own guard (`MemoryPort.persist`) then makes
 * sure no copy is stored, whatever the model answered.
 */
export class SessionFacts {
  private readonly deps: SessionFactsDeps;

  constructor(deps: SessionFactsDeps) {
    this.deps = deps;
  }

  /** The caller has checked the `conversation` consent. */
  async reconcile(seniorId: string, exchanges: Exchange[]): Promise<FactsReconciled> {
    const counts = emptyCounts();
    for (const operation of await this.plan(seniorId, exchanges)) {
      await yieldToIo();
      await this.apply(seniorId, operation, counts);
    }
    this.deps.logger.debug({ seniorId, ...counts }, 'session facts reconciled');
    return counts;
  }

  /** The model's stage: the held facts read, and what the session says of each fact. */
  async plan(seniorId: string, exchanges: Exchange[]): Promise<FactOperation[]> {
    const held = await this.deps.facts.known(seniorId, HELD_FACTS_SHOWN);
    return this.deps.extractor.reconcile(exchanges, held);
  }

  /** The database's stage, one operation at a time (a retried write resumes after those applied). */
  async apply(seniorId: string, operation: FactOperation, counts: FactsReconciled = emptyCounts()): Promise<FactsReconciled> {
    const { memory } = this.deps;
    if (operation.op === 'none') counts.unchanged += 1;
    else if (operation.op === 'invalidate') {
      if (await memory.invalidate(seniorId, operation.target)) counts.invalidated += 1;
    } else {
      const { content, category } = operation.fact;
      const supersedes = operation.op === 'update' ? { supersedes: operation.target } : {};
      const stored = await memory.persist({ seniorId, content, category, ...supersedes });
      // An update whose new text was already held still supersedes its target (unless it is the target).
      if (operation.op === 'update' && stored.id !== operation.target) counts.updated += 1;
      else if (stored.created) counts.added += 1;
      else counts.unchanged += 1;
    }
    return counts;
  }
}

function emptyCounts(): FactsReconciled {
  return { added: 0, updated: 0, invalidated: 0, unchanged: 0 };
}

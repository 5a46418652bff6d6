import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { MemoryFact, MemoryPort, NewMemoryFact, PersistedFact } from '../../machines/memory/memory.port.ts';
import type { FactValidity } from './pgvector-memory.adapter.ts';

type Backend = 'zep' | 'pgvector';
type Operation = 'persist' | 'invalidate' | 'search' | 'delete';

/**
 * Zep primary, pgvector synchronous backup. A fact is written to pgvector first
 * (its id then names the Zep edge), so a Zep failure never loses it; a search reads Zep
 * and falls back to pgvector; an erasure runs on both. Every outcome is counted. pgvector decides
 * what is a copy (Zep is written only for a fact it newly stored) and what still holds (Zep's
 * answers are kept only while pgvector holds them valid: an invalidation Zep missed is never recalled).
 */
export class DualWriteMemoryAdapter implements MemoryPort {
  private readonly primary: MemoryPort;
  private readonly backup: MemoryPort & FactValidity;
  private readonly counter: Counter<'backend' | 'operation' | 'outcome'>;
  private readonly logger: Pick<Logger, 'warn'>;

  constructor(
    primary: MemoryPort,
    backup: MemoryPort & FactValidity,
    counter: Counter<'backend' | 'operation' | 'outcome'>,
    logger: Pick<Logger, 'warn'>,
  ) {
    this.primary = primary;
    this.backup = backup;
    this.counter = counter;
    this.logger = logger;
  }

  async persist(fact: NewMemoryFact): Promise<PersistedFact> {
    const stored = await this.track('pgvector', 'persist', () => this.backup.persist(fact));
    if (stored.created) {
      await this.track('zep', 'persist', () => this.primary.persist({ ...fact, id: stored.id })).catch((err: unknown) =>
        this.logger.warn({ err, seniorId: fact.seniorId, factId: stored.id }, 'dual-write: Zep persist failed, fact kept in pgvector'),
      );
    } else if (fact.supersedes && fact.supersedes !== stored.id) {
      await this.invalidateInZep(fact.seniorId, fact.supersedes);
    }
    return stored;
  }

  async invalidate(seniorId: string, factId: string): Promise<boolean> {
    const invalidated = await this.track('pgvector', 'invalidate', () => this.backup.invalidate(seniorId, factId));
    if (invalidated) await this.invalidateInZep(seniorId, factId);
    return invalidated;
  }

  private async invalidateInZep(seniorId: string, factId: string): Promise<void> {
    await this.track('zep', 'invalidate', () => this.primary.invalidate(seniorId, factId)).catch((err: unknown) =>
      this.logger.warn({ err, seniorId, factId }, 'dual-write: Zep invalidation failed; pgvector holds the fact invalid, and Zep answers are checked against it'),
    );
  }

  async search(query: string, seniorId: string, limit: number, signal?: AbortSignal): Promise<MemoryFact[]> {
    try {
      const found = await this.track('zep', 'search', () => this.primary.search(query, seniorId, limit, signal));
      const valid = found.length > 0 ? await this.backup.validAmong(seniorId, found.map((f) => f.id)) : new Set<string>();
      return found.filter((f) => valid.has(f.id));
    } catch (err) {
      if (signal?.aborted) throw err;
      this.logger.warn({ err, seniorId }, 'dual-write: Zep search failed, reading pgvector');
      return this.track('pgvector', 'search', () => this.backup.search(query, seniorId, limit, signal));
    }
  }

  /** Both stores are always attempted; a failure of either fails the erasure (it is idempotent, retry it). */
  async deleteSenior(seniorId: string): Promise<number> {
    const results = await Promise.allSettled([
      this.track('zep', 'delete', () => this.primary.deleteSenior(seniorId)),
      this.track('pgvector', 'delete', () => this.backup.deleteSenior(seniorId)),
    ]);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return results.reduce((sum, r) => sum + (r as PromiseFulfilledResult<number>).value, 0);
  }

  private async track<T>(backend: Backend, operation: Operation, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      this.counter.inc({ backend, operation, outcome: 'ok' });
      return result;
    } catch (err) {
      this.counter.inc({ backend, operation, outcome: 'error' });
      throw err;
    }
  }
}

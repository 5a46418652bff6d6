import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { MemoryFact, MemoryPort, NewMemoryFact } from '../../machines/memory/memory.port.ts';

type Backend = 'zep' | 'pgvector';
type Operation = 'persist' | 'search' | 'delete';

/**
 * Zep primary, pgvector synchronous backup. A fact is written to pgvector first
 * (its id then names the Zep edge), so a Zep failure never loses it; a search reads Zep
 * and falls back to pgvector; an erasure runs on both. Every outcome is counted.
 */
export class DualWriteMemoryAdapter implements MemoryPort {
  constructor(
    private readonly primary: MemoryPort,
    private readonly backup: MemoryPort,
    private readonly counter: Counter<'backend' | 'operation' | 'outcome'>,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  async persist(fact: NewMemoryFact): Promise<MemoryFact> {
    const stored = await this.track('pgvector', 'persist', () => this.backup.persist(fact));
    await this.track('zep', 'persist', () => this.primary.persist({ ...fact, id: stored.id })).catch((err: unknown) =>
      this.logger.warn({ err, seniorId: fact.seniorId, factId: stored.id }, 'dual-write: Zep persist failed, fact kept in pgvector'),
    );
    return stored;
  }

  async search(query: string, seniorId: string, limit: number, signal?: AbortSignal): Promise<MemoryFact[]> {
    try {
      return await this.track('zep', 'search', () => this.primary.search(query, seniorId, limit, signal));
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

import type { PgErasureRepository } from '../../adapters/postgres/pg-erasure.repository.ts';
import type { MemoryPort } from '../../machines/memory/memory.port.ts';
import type { SessionRegistry } from './session-registry.ts';

/**
 * RGPD erasure of one senior. Memory stores first (each reports its own count, Zep
 * included), then every table of the schema that has a `senior_id` column, then the senior
 * row (PgErasureRepository). The live session closes and its in-memory state is dropped, the
 * semantic cache's entries included.
 * Idempotent: a second run returns zero counts.
 */
export class SeniorErasure {
  constructor(
    private readonly tables: PgErasureRepository,
    private readonly memoryStores: Record<string, Pick<MemoryPort, 'deleteSenior'>>,
    private readonly registry: SessionRegistry,
    /** RAM stores holding the senior's data (the semantic cache), emptied too. */
    private readonly inMemory: Record<string, { invalidateSenior(seniorId: string): number }> = {},
  ) {}

  async erase(seniorId: string): Promise<Record<string, number>> {
    this.registry.close(seniorId, 'erased');
    const counts: Record<string, number> = {};
    for (const [name, store] of Object.entries(this.inMemory)) counts[name] = store.invalidateSenior(seniorId);
    for (const [name, store] of Object.entries(this.memoryStores)) counts[name] = await store.deleteSenior(seniorId);
    // A store and a table may share a name (memory_facts): their counts add up.
    for (const [table, n] of Object.entries(await this.tables.eraseSenior(seniorId))) counts[table] = (counts[table] ?? 0) + n;
    return counts;
  }
}

import type pg from 'pg';
import type { MemoryPort } from '../../machines/memory/memory.port.ts';
import type { SessionRegistry } from './session-registry.ts';

/** Tables erased last, in this order: everything else references them. */
const ROOT_TABLES = ['devices', 'seniors'];

/**
 * RGPD erasure of one senior. Memory stores first (each reports its own count, Zep
 * included), then every table of the schema that has a `senior_id` column — found in
 * `information_schema`, so a table added later is erased without touching this code —
 * then the senior row. The live session closes and its in-memory state is dropped, the
 * semantic cache's entries included.
 * Idempotent: a second run returns zero counts.
 */
export class SeniorErasure {
  constructor(
    private readonly pool: pg.Pool,
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

    const tables = await this.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'senior_id' ORDER BY table_name`,
    );
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const ordered = [...tables.rows.map((r) => r.table_name).filter((t) => !ROOT_TABLES.includes(t)), 'devices'];
      for (const table of ordered) {
        const res = await client.query(`DELETE FROM "${table}" WHERE senior_id = $1::uuid`, [seniorId]);
        counts[table] = (counts[table] ?? 0) + (res.rowCount ?? 0);
      }
      const senior = await client.query('DELETE FROM seniors WHERE id = $1::uuid', [seniorId]);
      counts.seniors = senior.rowCount ?? 0;
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    return counts;
  }
}

import type { Logger } from 'pino';
import type pg from 'pg';
import type { Counter } from 'prom-client';
import type { ConsentPort, MemoryEmbedderPort, MemoryPort } from '../../machines/memory/memory.port.ts';
import { DualWriteMemoryAdapter } from './dual-write-memory.adapter.ts';
import { PgVectorMemoryAdapter } from './pgvector-memory.adapter.ts';
import { ZepMemoryAdapter, type ZepSettings } from './zep-memory.adapter.ts';

export interface ProvidedMemory {
  memory: MemoryPort;
  kind: 'pgvector' | 'dual-write';
  /** Each backend on its own, so an erasure can report a count per store. */
  stores: { zep: ZepMemoryAdapter; memory_facts: PgVectorMemoryAdapter };
}

/** Seed's MemoryProvider: Zep URL and key → dual-write (Zep primary, pgvector backup); otherwise pgvector alone. */
export function provideMemory(deps: {
  pool: pg.Pool;
  embedder: MemoryEmbedderPort;
  consents: ConsentPort;
  zep: ZepSettings;
  /** FACT_DUPLICATE_DISTANCE (unset: the embedding model's default). */
  duplicateDistance?: number | undefined;
  dualWriteCounter: Counter<'backend' | 'operation' | 'outcome'>;
  logger: Logger;
}): ProvidedMemory {
  const pgvector = new PgVectorMemoryAdapter(deps.pool, deps.embedder, deps.logger, { duplicateDistance: deps.duplicateDistance });
  const zep = new ZepMemoryAdapter(deps.zep, deps.consents);
  const stores = { zep, memory_facts: pgvector };
  if (!zep.provisioned) return { memory: pgvector, kind: 'pgvector', stores };
  return { memory: new DualWriteMemoryAdapter(zep, pgvector, deps.dualWriteCounter, deps.logger), kind: 'dual-write', stores };
}

import type pg from 'pg';
import { isDegenerateVector, type ConsentPort, type MemoryEmbedderPort, type MemoryPort } from '../../machines/memory/memory.port.ts';
import type { MemorySearchPort } from '../../machines/session/ports.ts';
import { vectorParam } from './pgvector-memory.adapter.ts';

/**
 * Tier 3, reached only on demand through the agent's `search_memory` tool: the facts of the
 * senior (MemoryPort, consent-joined) and the vectorized segments — those past the 3 most recent,
 * which are never injected — nearest the query. Nothing without the conversation consent.
 */
export class MemorySearch implements MemorySearchPort {
  private readonly pool: pg.Pool;
  private readonly consents: ConsentPort;
  private readonly memory: MemoryPort;
  private readonly embedder: MemoryEmbedderPort;

  constructor(
    pool: pg.Pool,
    consents: ConsentPort,
    memory: MemoryPort,
    embedder: MemoryEmbedderPort,
  ) {
    this.pool = pool;
    this.consents = consents;
    this.memory = memory;
    this.embedder = embedder;
  }

  /** `signal` is the agent call's: a turn that ends (stall, barge-in, close) cancels its search too. */
  async searchMemory(seniorId: string, query: string, signal?: AbortSignal): Promise<{ segments: string[]; facts: string[] }> {
    if (!(await this.consents.hasConsent(seniorId, 'conversation'))) return { segments: [], facts: [] };
    const facts = (await this.memory.search(query, seniorId, 5, signal)).map((f) => f.content);
    const [vector] = await this.embedder.embed([query], signal);
    if (isDegenerateVector(vector)) return { segments: [], facts };
    signal?.throwIfAborted();
    const segments = await this.pool.query<{ summary: string; ended_at: Date }>(
      `SELECT summary, ended_at FROM segments
        WHERE senior_id = $1::uuid AND embedding IS NOT NULL AND embedding_model = $2
        ORDER BY embedding <=> $3::vector LIMIT 3`,
      [seniorId, this.embedder.modelId, vectorParam(vector!)],
    );
    return { segments: segments.rows.map((r) => `${r.ended_at.toISOString().slice(0, 10)} : ${r.summary}`), facts };
  }
}

import type pg from 'pg';
import pgvector from 'pgvector';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';

export interface ReembedReport {
  reembedded: number;
  /** How many facts each previous model id had. */
  from: Record<string, number>;
  to: string;
}

/**
 * Re-embeds, in batches, every fact stored under another model id than `embedder`'s:
 * after a model change, facts are invisible to search until this has run.
 */
export async function reembedFacts(pool: pg.Pool, embedder: MemoryEmbedderPort, batchSize = 64): Promise<ReembedReport> {
  const report: ReembedReport = { reembedded: 0, from: {}, to: embedder.modelId };
  for (;;) {
    const batch = await pool.query<{ id: string; fact: string; embedding_model: string }>(
      'SELECT id, fact, embedding_model FROM memory_facts WHERE embedding_model <> $1 ORDER BY id LIMIT $2',
      [embedder.modelId, batchSize],
    );
    if (batch.rows.length === 0) return report;
    const vectors = await embedder.embed(batch.rows.map((r) => r.fact));
    await pool.query(
      `UPDATE memory_facts mf SET embedding = t.e::vector, embedding_model = $3
         FROM unnest($1::uuid[], $2::text[]) AS t(id, e) WHERE mf.id = t.id`,
      [batch.rows.map((r) => r.id), vectors.map((v) => pgvector.toSql(v)), embedder.modelId],
    );
    for (const row of batch.rows) report.from[row.embedding_model] = (report.from[row.embedding_model] ?? 0) + 1;
    report.reembedded += batch.rows.length;
  }
}

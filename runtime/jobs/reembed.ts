import type { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
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
export async function reembedFacts(facts: PgMemoryFactsRepository, embedder: MemoryEmbedderPort, batchSize = 64): Promise<ReembedReport> {
  const report: ReembedReport = { reembedded: 0, from: {}, to: embedder.modelId };
  for (;;) {
    const batch = await facts.embeddedWithOtherModel(embedder.modelId, batchSize);
    if (batch.length === 0) return report;
    const vectors = await embedder.embed(batch.map((r) => r.fact));
    await facts.setEmbeddings(
      batch.map((r, i) => ({ id: r.id, embedding: vectors[i]! })),
      embedder.modelId,
    );
    for (const row of batch) report.from[row.embeddingModel] = (report.from[row.embeddingModel] ?? 0) + 1;
    report.reembedded += batch.length;
  }
}

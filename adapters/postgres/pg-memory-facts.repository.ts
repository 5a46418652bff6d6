import type pg from 'pg';
import pgvector from 'pgvector';
import type { FactCategory } from '../../machines/memory/memory.port.ts';

export interface FactToReembed {
  id: string;
  fact: string;
  /** The model id its current vector was made with. */
  embeddingModel: string;
}

/**
 * `memory_facts` outside the MemoryPort (which `PgVectorMemoryAdapter` implements): the plain,
 * newest-first texts the dream and the recognizer's bias read, and the re-embedding after a model
 * change. What is read for a use joins the consents as recall does (INV-C01): a fact of a revoked
 * category reaches neither a model nor the recognizer.
 */
export class PgMemoryFactsRepository {
  constructor(private readonly pool: pg.Pool) {}

  /** The senior's newest consented facts (of one category if given), texts only, whatever model embedded them. */
  async latest(seniorId: string, limit: number, category?: FactCategory): Promise<string[]> {
    const res = await this.pool.query<{ fact: string }>(
      `SELECT mf.fact FROM memory_facts mf
         JOIN consents c ON c.senior_id = mf.senior_id AND c.category = mf.category AND c.revoked_at IS NULL
        WHERE mf.senior_id = $1 AND ($2::text IS NULL OR mf.category = $2)
        ORDER BY mf.created_at DESC, mf.seq DESC LIMIT $3`,
      [seniorId, category ?? null, limit],
    );
    return res.rows.map((r) => r.fact);
  }

  /** One batch of facts whose vector is not `modelId`'s, in id order. */
  async embeddedWithOtherModel(modelId: string, limit: number): Promise<FactToReembed[]> {
    const res = await this.pool.query<{ id: string; fact: string; embedding_model: string }>(
      'SELECT id, fact, embedding_model FROM memory_facts WHERE embedding_model <> $1 ORDER BY id LIMIT $2',
      [modelId, limit],
    );
    return res.rows.map((r) => ({ id: r.id, fact: r.fact, embeddingModel: r.embedding_model }));
  }

  /** Replaces the vectors of these facts, in one statement, as made with `modelId`. */
  async setEmbeddings(rows: ReadonlyArray<{ id: string; embedding: number[] }>, modelId: string): Promise<void> {
    await this.pool.query(
      `UPDATE memory_facts mf SET embedding = t.e::vector, embedding_model = $3
         FROM unnest($1::uuid[], $2::text[]) AS t(id, e) WHERE mf.id = t.id`,
      [rows.map((r) => r.id), rows.map((r) => pgvector.toSql(r.embedding)), modelId],
    );
  }
}

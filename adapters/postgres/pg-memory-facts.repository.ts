import type pg from 'pg';
import pgvector from 'pgvector';
import type { FactCategory } from '../../machines/memory/memory.port.ts';
import { conversationConsented } from './caregiver-consent.ts';

/** A valid fact as the reconciliation shows it to the extractor: what it may update or invalidate. */
export interface KnownFact {
  id: string;
  content: string;
  category: FactCategory;
}

/** A fact as the admin API lists it: derived text, its category, when it was stored and whether it still holds. */
export interface FactEntry extends KnownFact {
  createdAt: string;
  /** When a later fact superseded it, or null while it holds. */
  invalidAt: string | null;
}

/** Position after which a page starts: the last row's exact (microsecond) time and id. */
export interface FactCursor {
  createdAt: string;
  id: string;
}

const exactTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export interface FactToReembed {
  id: string;
  fact: string;
  /** The model id its current vector was made with. */
  embeddingModel: string;
}

/**
 * `memory_facts` outside the MemoryPort (which `PgVectorMemoryAdapter` implements): the newest-first
 * facts the dream, the recognizer's bias and the close-time reconciliation read, the admin listing,
 * and the re-embedding after a model change. What is read for a use joins the consents as recall
 * does (INV-C01): a fact of a revoked category reaches neither a model nor the recognizer; and it
 * reads valid facts only — a superseded fact (`invalid_at` set) is never used again.
 */
export class PgMemoryFactsRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The senior's newest valid, consented facts (of one category if given), whatever model embedded them. */
  async known(seniorId: string, limit: number, category?: FactCategory): Promise<KnownFact[]> {
    const res = await this.pool.query<{ id: string; fact: string; category: FactCategory }>(
      `SELECT mf.id, mf.fact, mf.category FROM memory_facts mf
         JOIN consents c ON c.senior_id = mf.senior_id AND c.category = mf.category AND c.revoked_at IS NULL
        WHERE mf.senior_id = $1 AND mf.invalid_at IS NULL AND ($2::text IS NULL OR mf.category = $2)
        ORDER BY mf.created_at DESC, mf.seq DESC LIMIT $3`,
      [seniorId, category ?? null, limit],
    );
    return res.rows.map((r) => ({ id: r.id, content: r.fact, category: r.category }));
  }

  /** `known`, texts only. */
  async latest(seniorId: string, limit: number, category?: FactCategory): Promise<string[]> {
    return (await this.known(seniorId, limit, category)).map((f) => f.content);
  }

  /**
   * One page of everything held for the senior, valid and invalidated, newest first, keyset on
   * (created_at DESC, id DESC); `next` is null on the last page. `consentedOnly`: what a caregiver
   * is shown — nothing without the `conversation` consent, then only the categories whose consent is active.
   */
  async page(seniorId: string, q: { limit: number; after?: FactCursor | undefined; consentedOnly: boolean }): Promise<{ data: FactEntry[]; next: FactCursor | null }> {
    const res = await this.pool.query<{ id: string; fact: string; category: FactCategory; created_at: string; invalid_at: string | null }>(
      `SELECT mf.id, mf.fact, mf.category, ${exactTime('mf.created_at')} AS created_at, ${exactTime('mf.invalid_at')} AS invalid_at
         FROM memory_facts mf
        WHERE mf.senior_id = $1::uuid
          AND ($2::timestamptz IS NULL OR (mf.created_at, mf.id) < ($2::timestamptz, $3::uuid))
          AND (NOT $4::boolean OR (${conversationConsented('mf.senior_id')} AND EXISTS (SELECT 1 FROM consents c WHERE c.senior_id = mf.senior_id AND c.category = mf.category AND c.revoked_at IS NULL)))
        ORDER BY mf.created_at DESC, mf.id DESC
        LIMIT $5`,
      [seniorId, q.after?.createdAt ?? null, q.after?.id ?? null, q.consentedOnly, q.limit + 1],
    );
    const data = res.rows.slice(0, q.limit).map((r) => ({ id: r.id, content: r.fact, category: r.category, createdAt: r.created_at, invalidAt: r.invalid_at }));
    const last = data.at(-1);
    return { data, next: res.rows.length > q.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
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

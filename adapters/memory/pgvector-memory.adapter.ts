import type { Logger } from 'pino';
import type pg from 'pg';
import pgvector from 'pgvector';
import { guardsAgree, questionGuard } from '../../machines/cache/near-miss-guard.ts';
import { inTransaction } from '../postgres/transaction.ts';
import {
  EMBEDDING_DIMENSIONS,
  InvalidFactCategoryError,
  isDegenerateVector,
  isFactCategory,
  type FactCategory,
  type MemoryEmbedderPort,
  type MemoryFact,
  type MemoryPort,
  type NewMemoryFact,
  type PersistedFact,
} from '../../machines/memory/memory.port.ts';

/**
 * How close (cosine distance) a new fact's vector must come to a held fact's for the two to be one
 * fact, by embedding model — and the near-miss guard must agree too (the same content words,
 * numbers, names and negation: « vit à Lyon » is never « vit à Nantes », « aime » never « n'aime
 * pas »), so a looser distance merges paraphrases, never two different facts. `kohami-local-hash-v1`:
 * the semantic cache's calibrated permissive threshold for that model, whose guard is the same (held-out
 * precision 1.000 on 543 labelled French pairs, adapters/semantic-cache/semantic-cache.calibration.json),
 * checked on facts by test/unit/fact-duplicates.test.ts. A model without a calibration
 * (`mistral-embed` included) gets UNCALIBRATED_DUPLICATE_DISTANCE: near-identical vectors only.
 * FACT_DUPLICATE_DISTANCE overrides both.
 */
export const CALIBRATED_DUPLICATE_DISTANCES: Readonly<Record<string, number>> = { 'kohami-local-hash-v1': 0.3 };
export const UNCALIBRATED_DUPLICATE_DISTANCE = 0.05;

/** The near-miss guard's half of "the same fact": the two agree on content words, numbers, names and negation. */
export function sameFactWording(a: string, b: string): boolean {
  return guardsAgree(questionGuard(a), questionGuard(b));
}

export function duplicateDistanceFor(modelId: string, override?: number): number {
  return override ?? CALIBRATED_DUPLICATE_DISTANCES[modelId] ?? UNCALIBRATED_DUPLICATE_DISTANCE;
}

export interface PgVectorMemoryOptions {
  /**
   * A senior with at most this many facts is ranked exactly over their own partition
   * (btree on senior_id). Above it, the HNSW index is used with pgvector 0.8 iterative
   * scans, so the senior filter can never starve the result.
   */
  exactScanLimit?: number;
  /** HNSW candidate list for the large-senior path. */
  efSearch?: number;
  /**
   * Recall's relevance floor: a ranked fact less similar to the query than this (cosine similarity)
   * is not returned, so an unrelated question gets no facts. Null: no floor (the top `limit`).
   * Calibrated per embedding model (adapters/memory/recall-floor.ts); the chronological fallback,
   * which has no similarity to judge by, is never floored.
   */
  minSimilarity?: number | null;
  /** FACT_DUPLICATE_DISTANCE; by default `duplicateDistanceFor` the embedder's model. */
  duplicateDistance?: number | undefined;
}

/** The stores that can tell which of some facts still hold (the dual-write checks Zep's answers with it). */
export interface FactValidity {
  validAmong(seniorId: string, ids: readonly string[]): Promise<Set<string>>;
}

interface FactRow {
  id: string;
  senior_id: string;
  fact: string;
  category: FactCategory;
  partition_size?: number;
  distance?: number;
}

// Search results carry no embedding: recall never uses it, and 1024 floats per row as text cost more than the ranking.
const COLUMNS = 'mf.id, mf.senior_id, mf.fact, mf.category';
// INV-C01 and INV-P05: the seed's consent JOIN, always scoped to one senior and one vector space.
// Only valid facts: a superseded one (invalid_at set) is kept, never recalled.
const SCOPE = `FROM memory_facts mf
  JOIN consents c ON c.senior_id = mf.senior_id AND c.category = mf.category AND c.revoked_at IS NULL
 WHERE mf.senior_id = $1::uuid AND mf.embedding_model = $2 AND mf.invalid_at IS NULL`;

/**
 * One round trip for the common case. The senior's partition (capped at $5 rows) is
 * materialized, so the ORDER BY cannot go through the HNSW index: the ranking is exact.
 * `partition_size` = $5 means the partition overflowed the cap, and the caller re-runs
 * the search on the index.
 *
 * Both searches return each fact's cosine distance, and the relevance floor is applied to
 * the top `limit` they return, not in a WHERE: a floor on the sort key keeps exactly the
 * same facts either way, while a WHERE would hide `partition_size` when nothing passes (an
 * oversized partition would then go unnoticed) and puts a distance filter under the HNSW
 * iterative scan, which pgvector advises against. bench:recall measures both forms.
 */
export const EXACT_SEARCH_SQL = `WITH partition AS MATERIALIZED (SELECT ${COLUMNS}, mf.embedding AS v ${SCOPE} LIMIT $5)
SELECT id, senior_id, fact, category, (SELECT count(*)::int FROM partition) AS partition_size, v <=> $3::vector AS distance
  FROM partition ORDER BY distance LIMIT $4`;
export const INDEXED_SEARCH_SQL = `SELECT ${COLUMNS}, mf.embedding <=> $3::vector AS distance ${SCOPE} ORDER BY mf.embedding <=> $3::vector LIMIT $4`;
const CHRONOLOGICAL_SQL = `SELECT ${COLUMNS} ${SCOPE} ORDER BY mf.created_at DESC, mf.seq DESC LIMIT $3`;

/** Held copies are looked for over every valid fact of the senior, whatever its consent: storage, not a use. */
const SAME_CONTENT_SQL = `SELECT id, senior_id, fact, category FROM memory_facts
 WHERE senior_id = $1::uuid AND invalid_at IS NULL AND content_key = kohami_fact_key($2) LIMIT 1`;
/** The valid facts nearest a new one, within the distance; materialized so the ranking is exact (never HNSW's). */
const NEAR_COPIES_SQL = `WITH partition AS MATERIALIZED (
  SELECT id, senior_id, fact, category, embedding AS v FROM memory_facts
   WHERE senior_id = $1::uuid AND embedding_model = $2 AND invalid_at IS NULL)
SELECT id, senior_id, fact, category FROM partition WHERE (v <=> $3::vector) <= $4 ORDER BY v <=> $3::vector LIMIT 5`;
const INSERT_SQL = `INSERT INTO memory_facts (id, senior_id, fact, category, embedding, embedding_model)
VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5::vector, $6)
ON CONFLICT (senior_id, content_key) WHERE invalid_at IS NULL DO NOTHING RETURNING id`;
const INVALIDATE_SQL = 'UPDATE memory_facts SET invalid_at = now() WHERE id = $1::uuid AND senior_id = $2::uuid AND invalid_at IS NULL';
/** The first key of the per-senior advisory lock that serializes fact writes (the second is the senior's hash). */
const FACT_WRITE_LOCK = 0x6b6f6661;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A query vector in pgvector's binary input format (int16 dimensions, int16 unused, float4s, big
 * endian), which `pg` sends as a binary parameter: a fifth of the text form's bytes, and nothing
 * for the database to parse. The stored vectors are float4 too, so the ranking is the same.
 */
export function vectorParam(vector: readonly number[]): Buffer {
  const buf = Buffer.allocUnsafe(4 + 4 * vector.length);
  buf.writeInt16BE(vector.length, 0);
  buf.writeInt16BE(0, 2);
  for (let i = 0; i < vector.length; i++) buf.writeFloatBE(vector[i]!, 4 + 4 * i);
  return buf;
}

/** The reference MemoryPort: facts in `memory_facts`, vector(1024), cosine distance. */
export class PgVectorMemoryAdapter implements MemoryPort, FactValidity {
  private readonly exactScanLimit: number;
  private readonly efSearch: number;
  /** The floor as a cosine distance (pgvector's `<=>` is 1 − similarity); null: none. */
  private readonly maxDistance: number | null;
  readonly duplicateDistance: number;

  private readonly pool: pg.Pool;
  private readonly embedder: MemoryEmbedderPort;
  private readonly logger: Pick<Logger, 'warn'>;

  constructor(
    pool: pg.Pool,
    embedder: MemoryEmbedderPort,
    logger: Pick<Logger, 'warn'>,
    options: PgVectorMemoryOptions = {},
  ) {
    this.pool = pool;
    this.embedder = embedder;
    this.logger = logger;
    this.exactScanLimit = options.exactScanLimit ?? 5000;
    this.efSearch = options.efSearch ?? 200;
    this.maxDistance = options.minSimilarity === null || options.minSimilarity === undefined ? null : 1 - options.minSimilarity;
    this.duplicateDistance = duplicateDistanceFor(embedder.modelId, options.duplicateDistance);
  }

  /**
   * Never a second copy: under a per-senior advisory lock (one transaction), a valid fact of the same
   * content (`content_key`), or of the same meaning (within `duplicateDistance` and agreed by the
   * near-miss guard), is returned instead of stored. The unique index on valid content keys holds
   * even for a writer that skipped the lock. `supersedes` is invalidated in the same transaction.
   */
  async persist(fact: NewMemoryFact): Promise<PersistedFact> {
    if (!isFactCategory(fact.category)) throw new InvalidFactCategoryError(fact.category);
    const content = fact.content.trim();
    // The network call before the lock: a slow embedder never holds other writers of the senior.
    const [embedding] = await this.embedder.embed([content]);
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [FACT_WRITE_LOCK, fact.seniorId]);
      let stored: PersistedFact | null = await this.heldCopy(client, fact.seniorId, content, embedding!);
      if (!stored) {
        const res = await client.query<{ id: string }>(INSERT_SQL, [fact.id ?? null, fact.seniorId, content, fact.category, pgvector.toSql(embedding!), this.embedder.modelId]);
        const id = res.rows[0]?.id;
        stored = id
          ? { id, seniorId: fact.seniorId, content, category: fact.category, embedding: embedding!, created: true }
          : // Only a writer that skipped the lock can have stored it meanwhile: the index refused the copy.
            await this.sameContent(client, fact.seniorId, content);
      }
      if (!stored) throw new Error('memory fact neither stored nor found held');
      if (fact.supersedes && fact.supersedes !== stored.id && UUID.test(fact.supersedes)) await client.query(INVALIDATE_SQL, [fact.supersedes, fact.seniorId]);
      return stored;
    });
  }

  async invalidate(seniorId: string, factId: string): Promise<boolean> {
    if (!UUID.test(factId)) return false;
    const res = await this.pool.query(INVALIDATE_SQL, [factId, seniorId]);
    return (res.rowCount ?? 0) > 0;
  }

  async validAmong(seniorId: string, ids: readonly string[]): Promise<Set<string>> {
    const wellFormed = ids.filter((id) => UUID.test(id));
    if (wellFormed.length === 0) return new Set();
    const res = await this.pool.query<{ id: string }>('SELECT id FROM memory_facts WHERE senior_id = $1::uuid AND id = ANY($2::uuid[]) AND invalid_at IS NULL', [seniorId, wellFormed]);
    return new Set(res.rows.map((r) => r.id));
  }

  private async sameContent(client: pg.PoolClient, seniorId: string, content: string): Promise<PersistedFact | null> {
    const res = await client.query<FactRow>(SAME_CONTENT_SQL, [seniorId, content]);
    return res.rows[0] ? { ...toFact(res.rows[0]), created: false } : null;
  }

  private async heldCopy(client: pg.PoolClient, seniorId: string, content: string, embedding: number[]): Promise<PersistedFact | null> {
    const same = await this.sameContent(client, seniorId, content);
    if (same || isDegenerateVector(embedding) || embedding.length !== EMBEDDING_DIMENSIONS) return same;
    const near = await client.query<FactRow>(NEAR_COPIES_SQL, [seniorId, this.embedder.modelId, vectorParam(embedding), this.duplicateDistance]);
    if (near.rows.length === 0) return null;
    const copy = near.rows.find((row) => sameFactWording(content, row.fact));
    return copy ? { ...toFact(copy), created: false } : null;
  }

  async search(query: string, seniorId: string, limit: number, signal?: AbortSignal): Promise<MemoryFact[]> {
    let vector: number[] | undefined;
    try {
      [vector] = await this.embedder.embed([query], signal);
    } catch (err) {
      // Nobody waits any more: no fallback query either.
      if (signal?.aborted) throw err;
      this.logger.warn({ err, seniorId, embeddingModel: this.embedder.modelId }, 'memory search: embedder failed, chronological fallback');
      return this.chronological(seniorId, limit);
    }
    if (isDegenerateVector(vector) || vector!.length !== EMBEDDING_DIMENSIONS) {
      this.logger.warn({ seniorId, embeddingModel: this.embedder.modelId }, 'memory search: isDegenerateVector, chronological fallback');
      return this.chronological(seniorId, limit);
    }
    signal?.throwIfAborted();
    return this.ranked(seniorId, vectorParam(vector!), limit);
  }

  async deleteSenior(seniorId: string): Promise<number> {
    const res = await this.pool.query('DELETE FROM memory_facts WHERE senior_id = $1::uuid', [seniorId]);
    return res.rowCount ?? 0;
  }

  private async ranked(seniorId: string, vector: Buffer, limit: number): Promise<MemoryFact[]> {
    const cap = this.exactScanLimit + 1;
    const exact = await this.pool.query<FactRow>(EXACT_SEARCH_SQL, [seniorId, this.embedder.modelId, vector, limit, cap]);
    const rows = (exact.rows[0]?.partition_size ?? 0) < cap ? exact.rows : await this.indexed(seniorId, vector, limit);
    const floor = this.maxDistance;
    return (floor === null ? rows : rows.filter((r) => r.distance! <= floor)).map(toFact);
  }

  /** A senior too large for an exact scan: HNSW with iterative scans, settings local to one transaction. */
  private async indexed(seniorId: string, vector: Buffer, limit: number): Promise<FactRow[]> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL hnsw.iterative_scan = strict_order');
      await client.query(`SET LOCAL hnsw.ef_search = ${Math.max(this.efSearch, limit)}`);
      const res = await client.query<FactRow>(INDEXED_SEARCH_SQL, [seniorId, this.embedder.modelId, vector, limit]);
      await client.query('COMMIT');
      return res.rows;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  private async chronological(seniorId: string, limit: number): Promise<MemoryFact[]> {
    const res = await this.pool.query<FactRow>(CHRONOLOGICAL_SQL, [seniorId, this.embedder.modelId, limit]);
    return res.rows.map(toFact);
  }
}

function toFact(row: FactRow): MemoryFact {
  return { id: row.id, seniorId: row.senior_id, content: row.fact, category: row.category };
}

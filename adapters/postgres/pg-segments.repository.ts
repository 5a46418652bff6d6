import type pg from 'pg';
import pgvector from 'pgvector';

export interface SegmentRow {
  id: string;
  summary: string | null;
  startedAt: string;
  endedAt: string;
  turnCount: number;
}

/** `segments`: tier 2 of the conversation memory, scoped by senior (INV-P05). */
export class PgSegmentsRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async insert(segment: { seniorId: string; summary: string | null; startedAt: Date; endedAt: Date; turnCount: number }): Promise<string> {
    const res = await this.pool.query<{ id: string }>(
      'INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [segment.seniorId, segment.summary, segment.startedAt, segment.endedAt, segment.turnCount],
    );
    return res.rows[0]!.id;
  }

  /** The most recent summarized segments, newest first: what the next session is reminded of. */
  async recent(seniorId: string, limit: number): Promise<Array<SegmentRow & { summary: string }>> {
    const res = await this.pool.query<{ id: string; summary: string; started_at: Date; ended_at: Date; turn_count: number }>(
      `SELECT id, summary, started_at, ended_at, turn_count FROM segments
        WHERE senior_id = $1::uuid AND summary IS NOT NULL ORDER BY ended_at DESC LIMIT $2`,
      [seniorId, limit],
    );
    return res.rows.map((r) => ({ id: r.id, summary: r.summary, startedAt: r.started_at.toISOString(), endedAt: r.ended_at.toISOString(), turnCount: r.turn_count }));
  }

  /** Tier 3: the summarized segments past the `recent` most recent whose vector is missing or not `modelId`'s. */
  async unembeddedBeyondRecent(seniorId: string, recent: number, modelId: string): Promise<Array<{ id: string; summary: string }>> {
    const res = await this.pool.query<{ id: string; summary: string }>(
      `SELECT id, summary FROM segments WHERE senior_id = $1 AND summary IS NOT NULL
          AND id NOT IN (SELECT id FROM segments WHERE senior_id = $1 AND summary IS NOT NULL ORDER BY ended_at DESC LIMIT $3)
          AND (embedding IS NULL OR embedding_model <> $2)`,
      [seniorId, modelId, recent],
    );
    return res.rows;
  }

  async setEmbeddings(rows: ReadonlyArray<{ id: string; embedding: number[] }>, modelId: string): Promise<void> {
    for (const row of rows) {
      await this.pool.query('UPDATE segments SET embedding = $2::vector, embedding_model = $3 WHERE id = $1', [row.id, pgvector.toSql(row.embedding), modelId]);
    }
  }
}

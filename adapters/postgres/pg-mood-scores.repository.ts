import type pg from 'pg';
import { MOOD_TIERS, type MoodTier } from '../../machines/memory/derivation.ts';
import { conversationConsented } from './caregiver-consent.ts';

export interface MoodEntry {
  id: string;
  score: number;
  tier: MoodTier;
  source: 'per_turn';
  summary: string | null;
  recordedAt: string;
}

/** Position after which a page starts: the last row's exact (microsecond) time and id. */
export interface MoodCursor {
  recordedAt: string;
  id: string;
}

export interface MoodEntryQuery {
  limit: number;
  after?: MoodCursor | undefined;
  source?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** What a caregiver is shown: no summary without the `conversation` consent (scores and tiers stay). */
  consentedOnly?: boolean;
}

export interface MoodDay {
  day: string;
  average: number;
  min: number;
  max: number;
  count: number;
  dominantTier: MoodTier;
}

/** Exact to the microsecond, so a keyset cursor never skips or repeats a row. */
const EXACT_TIME = `to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** `mood_scores` (never verbatim: scores, tiers and summaries only), always scoped by senior (INV-P05). */
export class PgMoodScoresRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async insert(row: { seniorId: string; score: number; tier: MoodTier; summary: string | null; recordedAt: Date }): Promise<string> {
    const res = await this.pool.query<{ id: string }>(
      `INSERT INTO mood_scores (senior_id, score, tier, source, summary, recorded_at) VALUES ($1, $2, $3, 'per_turn', $4, $5) RETURNING id`,
      [row.seniorId, row.score, row.tier, row.summary, row.recordedAt],
    );
    return res.rows[0]!.id;
  }

  /** The per-turn summaries (the dream's notes) recorded from `days` days before `since` on, oldest first. */
  async notesSince(seniorId: string, since: string, days: number): Promise<string[]> {
    const res = await this.pool.query<{ summary: string }>(
      `SELECT summary FROM mood_scores WHERE senior_id = $1 AND summary IS NOT NULL AND recorded_at >= $2::timestamptz - make_interval(days => $3) ORDER BY recorded_at`,
      [seniorId, since, days],
    );
    return res.rows.map((r) => r.summary);
  }

  /** Drops the summaries recorded more than `days` days before `before` (scores and tiers stay); returns how many. */
  async purgeNotes(seniorId: string, before: string, days: number): Promise<number> {
    const res = await this.pool.query(
      `UPDATE mood_scores SET summary = NULL WHERE senior_id = $1 AND summary IS NOT NULL AND recorded_at < $2::timestamptz - make_interval(days => $3)`,
      [seniorId, before, days],
    );
    return res.rowCount ?? 0;
  }

  /** One page, newest first, keyset on (recorded_at DESC, id DESC); `next` is null on the last page. */
  async entries(seniorId: string, q: MoodEntryQuery): Promise<{ data: MoodEntry[]; next: MoodCursor | null }> {
    const res = await this.pool.query<{ id: string; score: number; tier: MoodTier; source: 'per_turn'; summary: string | null; recorded_at: string }>(
      `SELECT id, score, tier, source, CASE WHEN NOT $8::boolean OR ${conversationConsented('mood_scores.senior_id')} THEN summary END AS summary, ${EXACT_TIME} AS recorded_at
         FROM mood_scores
        WHERE senior_id = $1::uuid
          AND ($2::timestamptz IS NULL OR (recorded_at, id) < ($2::timestamptz, $3::uuid))
          AND ($4::text IS NULL OR source = $4)
          AND ($5::timestamptz IS NULL OR recorded_at >= $5)
          AND ($6::timestamptz IS NULL OR recorded_at < $6)
        ORDER BY recorded_at DESC, id DESC
        LIMIT $7`,
      [seniorId, q.after?.recordedAt ?? null, q.after?.id ?? null, q.source ?? null, q.from ?? null, q.to ?? null, q.limit + 1, q.consentedOnly ?? false],
    );
    const rows = res.rows.slice(0, q.limit);
    const data = rows.map((r) => ({ id: r.id, score: r.score, tier: r.tier, source: r.source, summary: r.summary, recordedAt: r.recorded_at }));
    const last = data.at(-1);
    return { data, next: res.rows.length > q.limit && last ? { recordedAt: last.recordedAt, id: last.id } : null };
  }

  /**
   * Daily rollup over Europe/Paris days. The dominant tier is the most frequent one; a tie goes
   * to the more concerning tier, so a caregiver is never shown a day as better than it was.
   */
  async timeline(seniorId: string, range: { from?: Date | undefined; to?: Date | undefined }): Promise<MoodDay[]> {
    const res = await this.pool.query<{ day: string; tier: MoodTier; n: number; total: number; min: number; max: number }>(
      `SELECT to_char(recorded_at AT TIME ZONE 'Europe/Paris', 'YYYY-MM-DD') AS day, tier,
              count(*)::int AS n, sum(score)::int AS total, min(score)::int AS min, max(score)::int AS max
         FROM mood_scores
        WHERE senior_id = $1::uuid AND ($2::timestamptz IS NULL OR recorded_at >= $2) AND ($3::timestamptz IS NULL OR recorded_at < $3)
        GROUP BY 1, 2 ORDER BY 1`,
      [seniorId, range.from ?? null, range.to ?? null],
    );
    const days = new Map<string, MoodDay & { total: number; tierCounts: Map<MoodTier, number> }>();
    for (const r of res.rows) {
      const d = days.get(r.day) ?? { day: r.day, average: 0, min: r.min, max: r.max, count: 0, dominantTier: r.tier, total: 0, tierCounts: new Map() };
      d.count += r.n;
      d.total += r.total;
      d.min = Math.min(d.min, r.min);
      d.max = Math.max(d.max, r.max);
      d.tierCounts.set(r.tier, r.n);
      days.set(r.day, d);
    }
    return [...days.values()].map(({ total, tierCounts, ...d }) => ({
      ...d,
      average: Math.round((total / d.count) * 10) / 10,
      // MOOD_TIERS runs from most to least concerning: the first maximum wins ties.
      dominantTier: MOOD_TIERS.reduce((best, tier) => ((tierCounts.get(tier) ?? 0) > (tierCounts.get(best) ?? 0) ? tier : best)),
    }));
  }
}

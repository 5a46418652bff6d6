import type pg from 'pg';
import type { Candidate } from '../../machines/memory/dream.ts';
import type { FactCategory } from '../../machines/memory/memory.port.ts';

/**
 * The nightly dream's own tables, scoped by senior: `consolidation_runs` (one per senior and
 * Europe/Paris day) and `consolidation_candidates` (patterns waiting to be promoted).
 */
export class PgDreamRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The seniors with a capture or a segment in the last 7 days: those the nightly dream is for. */
  async seniorsActiveInLastWeek(): Promise<string[]> {
    const res = await this.pool.query<{ senior_id: string }>(
      `SELECT senior_id FROM mood_scores WHERE recorded_at > now() - interval '7 days'
       UNION SELECT senior_id FROM segments WHERE ended_at > now() - interval '7 days'`,
    );
    return res.rows.map((r) => r.senior_id);
  }

  async hasRun(seniorId: string, day: string): Promise<boolean> {
    const res = await this.pool.query('SELECT 1 FROM consolidation_runs WHERE senior_id = $1 AND day = $2', [seniorId, day]);
    return (res.rowCount ?? 0) > 0;
  }

  /** Records the day's run with its report; a run already recorded for that day is kept. */
  async recordRun(seniorId: string, day: string, report: object): Promise<void> {
    await this.pool.query('INSERT INTO consolidation_runs (senior_id, day, report) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [seniorId, day, JSON.stringify(report)]);
  }

  async candidates(seniorId: string): Promise<Candidate[]> {
    const res = await this.pool.query<{ pattern: string; category: FactCategory; seen_on: string[]; created_at: Date }>(
      `SELECT pattern, category, to_json(seen_on)::jsonb AS seen_on, created_at FROM consolidation_candidates WHERE senior_id = $1`,
      [seniorId],
    );
    return res.rows.map((r) => ({ pattern: r.pattern, category: r.category, seenOn: r.seen_on, createdAt: r.created_at.getTime() }));
  }

  /** The senior's waiting candidates become exactly these. */
  async replaceCandidates(seniorId: string, candidates: readonly Candidate[]): Promise<void> {
    await this.pool.query('DELETE FROM consolidation_candidates WHERE senior_id = $1', [seniorId]);
    for (const c of candidates) {
      await this.pool.query('INSERT INTO consolidation_candidates (senior_id, pattern, category, seen_on, created_at) VALUES ($1, $2, $3, $4::date[], $5)', [
        seniorId,
        c.pattern,
        c.category,
        c.seenOn,
        new Date(c.createdAt),
      ]);
    }
  }
}

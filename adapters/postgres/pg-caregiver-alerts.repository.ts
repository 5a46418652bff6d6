import type pg from 'pg';
import type { KnownEpisode, MoodAlert } from '../../machines/memory/mood-alerts.ts';
import { inTransaction } from './transaction.ts';

/** A recorded episode, as its webhook posts it: ids, days and numbers. */
export type RecordedAlert = MoodAlert & { id: string; seniorId: string; detectedAt: string };

interface AlertRow {
  id: string;
  senior_id: string;
  kind: MoodAlert['kind'];
  from_day: string;
  to_day: string;
  open: boolean;
  days: number;
  previous_average: number | null;
  average: number | null;
  drop: number | null;
  detected_at: string;
}

/** The foreign key to `seniors` (migrations/014_caregiver_alerts.sql's default name). */
const SENIOR_KEY = 'caregiver_alerts_senior_id_fkey';

const DAY = (column: string) => `to_char(${column}, 'YYYY-MM-DD') AS ${column}`;

function alertOf(r: AlertRow): RecordedAlert {
  const common = { id: r.id, seniorId: r.senior_id, open: r.open, from: r.from_day, to: r.to_day, days: r.days, detectedAt: r.detected_at };
  return r.kind === 'tier_streak'
    ? { ...common, kind: 'tier_streak', tier: 'preoccupant' }
    : { ...common, kind: 'weekly_drop', previousAverage: r.previous_average!, average: r.average!, drop: r.drop! };
}

/** `caregiver_alerts`: the mood alert episodes, one row per (senior, kind, first day), always scoped by senior (INV-P05). */
export class PgCaregiverAlertsRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The senior's recorded episodes whose last day is `since` or later. */
  async known(seniorId: string, since: string): Promise<KnownEpisode[]> {
    const res = await this.pool.query<KnownEpisode>(
      `SELECT kind, to_char(from_day, 'YYYY-MM-DD') AS "from", to_char(to_day, 'YYYY-MM-DD') AS "to"
         FROM caregiver_alerts WHERE senior_id = $1::uuid AND to_day >= $2::date`,
      [seniorId, since],
    );
    return res.rows;
  }

  /**
   * Records `episodes` (the senior's, as evaluated now) in one transaction: a new one is inserted,
   * its webhook `pending` when `deliver`; a known one (same kind and first day) takes the new last
   * day and numbers. A recorded episode still open that the evaluation no longer finds (a setting
   * changed) is closed. Nothing is recorded for a senior being erased or gone. Returns the new ids.
   */
  async record(seniorId: string, episodes: readonly MoodAlert[], deliver: boolean): Promise<string[]> {
    try {
      return await this.recordIn(seniorId, episodes, deliver);
    } catch (err) {
      // On PostgreSQL an erasure that deletes the senior row after this transaction read it makes the
      // foreign key refuse the insert: the senior is gone, so nothing is recorded, as for one gone before.
      const { code, constraint } = err as { code?: string; constraint?: string };
      if (code === '23503' && constraint === SENIOR_KEY) return [];
      throw err;
    }
  }

  private async recordIn(seniorId: string, episodes: readonly MoodAlert[], deliver: boolean): Promise<string[]> {
    return inTransaction(this.pool, async (tx) => {
      const added: string[] = [];
      const seen: string[] = [];
      for (const e of episodes) {
        const drop = e.kind === 'weekly_drop' ? [e.previousAverage, e.average, e.drop] : [null, null, null];
        const res = await tx.query<{ id: string; inserted: boolean }>(
          `INSERT INTO caregiver_alerts (senior_id, kind, from_day, to_day, open, days, previous_average, average, drop, delivery)
           SELECT $1::uuid, $2, $3::date, $4::date, $5, $6, $7, $8, $9, $10 FROM seniors WHERE id = $1::uuid AND erasing_since IS NULL
           ON CONFLICT (senior_id, kind, from_day) DO UPDATE
              SET to_day = EXCLUDED.to_day, open = EXCLUDED.open, days = EXCLUDED.days, previous_average = EXCLUDED.previous_average,
                  average = EXCLUDED.average, drop = EXCLUDED.drop, updated_at = now()
           RETURNING id, (xmax = 0) AS inserted`,
          [seniorId, e.kind, e.from, e.to, e.open, e.days, ...drop, deliver ? 'pending' : 'none'],
        );
        const row = res.rows[0];
        if (!row) continue;
        seen.push(row.id);
        if (row.inserted) added.push(row.id);
      }
      await tx.query(`UPDATE caregiver_alerts SET open = false, updated_at = now() WHERE senior_id = $1::uuid AND open AND NOT (id = ANY($2::uuid[]))`, [seniorId, seen]);
      return added;
    });
  }

  /** The senior's episodes whose webhook is not queued yet. */
  async pendingDeliveries(seniorId: string): Promise<string[]> {
    const res = await this.pool.query<{ id: string }>(`SELECT id FROM caregiver_alerts WHERE senior_id = $1::uuid AND delivery = 'pending' ORDER BY from_day`, [seniorId]);
    return res.rows.map((r) => r.id);
  }

  async markQueued(seniorId: string, id: string): Promise<void> {
    await this.pool.query(`UPDATE caregiver_alerts SET delivery = 'queued' WHERE senior_id = $1::uuid AND id = $2::uuid`, [seniorId, id]);
  }

  /** One of the senior's episodes, or null once the senior is erased. */
  async get(seniorId: string, id: string): Promise<RecordedAlert | null> {
    const res = await this.pool.query<AlertRow>(
      `SELECT id, senior_id, kind, ${DAY('from_day')}, ${DAY('to_day')}, open, days, previous_average, average, drop,
              to_char(detected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS detected_at
         FROM caregiver_alerts WHERE senior_id = $1::uuid AND id = $2::uuid`,
      [seniorId, id],
    );
    return res.rows[0] ? alertOf(res.rows[0]) : null;
  }
}

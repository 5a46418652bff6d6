import { inTransaction } from './transaction.ts';
import type pg from 'pg';
import { z } from 'zod';
import { parsePauseProfile, type PauseProfile } from '../../machines/voice/pause-profile.ts';

export const InterlocutorSchema = z.object({
  role: z.string().max(200).optional(),
  interests: z.array(z.string().max(200)).max(30).default([]),
  recurringTopics: z.array(z.string().max(200)).max(30).default([]),
  patterns: z.array(z.string().max(300)).max(30).default([]),
});
export type Interlocutor = z.infer<typeof InterlocutorSchema>;

export const CompassSchema = z.object({
  resumeWith: z.string().max(500).optional(),
  questionsToAsk: z.array(z.string().max(300)).max(10).default([]),
  avoid: z.array(z.string().max(300)).max(10).default([]),
  uncertainties: z.array(z.string().max(300)).max(10).default([]),
  tone: z.string().max(300).optional(),
  topicsToExplore: z.array(z.string().max(300)).max(10).default([]),
});
export type Compass = z.infer<typeof CompassSchema>;

/** Personas, interlocutor profiles and compasses (derived, never verbatim), scoped by senior. */
export class PgProfilesRepository {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The senior's persona, else the deployment's, else null (the built-in one applies). */
  async persona(seniorId: string | null): Promise<string | null> {
    const res = await this.pool.query<{ persona: string; senior_id: string | null }>(
      'SELECT persona, senior_id FROM personas WHERE senior_id IS NULL OR senior_id = $1::uuid ORDER BY senior_id NULLS LAST LIMIT 1',
      [seniorId],
    );
    return res.rows[0]?.persona ?? null;
  }

  async setPersona(seniorId: string | null, persona: string | null): Promise<void> {
    if (persona === null) {
      await this.pool.query('DELETE FROM personas WHERE senior_id IS NOT DISTINCT FROM $1::uuid', [seniorId]);
      return;
    }
    const updated = await this.pool.query('UPDATE personas SET persona = $2, updated_at = now() WHERE senior_id IS NOT DISTINCT FROM $1::uuid', [seniorId, persona]);
    if ((updated.rowCount ?? 0) === 0) await this.pool.query('INSERT INTO personas (senior_id, persona) VALUES ($1, $2)', [seniorId, persona]);
  }

  /** `pauses`: the senior's mid-sentence pause profile (empty when none was kept; a malformed one reads as empty). */
  async profile(seniorId: string): Promise<{ interlocutor: Interlocutor; compass: Compass; pauses: PauseProfile }> {
    const res = await this.pool.query<{ interlocutor: unknown; compass: unknown; pauses: unknown }>('SELECT interlocutor, compass, pauses FROM profiles WHERE senior_id = $1::uuid', [seniorId]);
    const row = res.rows[0];
    return { interlocutor: InterlocutorSchema.parse(row?.interlocutor ?? {}), compass: CompassSchema.parse(row?.compass ?? {}), pauses: parsePauseProfile(row?.pauses) };
  }

  /**
   * Folds new pauses into the senior's pause profile, in one transaction (two sessions closing at once
   * both count). `update` gets the stored profile and returns the next. False when the senior is gone
   * (an erased senior's profile is never written again).
   */
  async updatePauses(seniorId: string, update: (current: PauseProfile) => PauseProfile): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO profiles (senior_id) SELECT id FROM seniors WHERE id = $1::uuid ON CONFLICT (senior_id) DO NOTHING', [seniorId]);
      const res = await client.query<{ pauses: unknown }>('SELECT pauses FROM profiles WHERE senior_id = $1::uuid FOR UPDATE', [seniorId]);
      const row = res.rows[0];
      // Nothing was written: committing the empty transaction is the same as rolling it back.
      if (!row) return false;
      const next = update(parsePauseProfile(row.pauses));
      await client.query('UPDATE profiles SET pauses = $2 WHERE senior_id = $1::uuid', [seniorId, JSON.stringify(next)]);
      return true;
    });
  }

  async save(seniorId: string, patch: { interlocutor?: Interlocutor; compass?: Compass }): Promise<void> {
    const { interlocutor, compass } = await this.profile(seniorId);
    const current = { interlocutor, compass };
    const next = { ...current, ...patch };
    await this.pool.query(
      `INSERT INTO profiles (senior_id, interlocutor, compass) VALUES ($1, $2, $3)
       ON CONFLICT (senior_id) DO UPDATE SET interlocutor = $2, compass = $3, updated_at = now()`,
      [seniorId, JSON.stringify(next.interlocutor), JSON.stringify(next.compass)],
    );
  }
}

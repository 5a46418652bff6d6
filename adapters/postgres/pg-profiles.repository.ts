import type pg from 'pg';
import { z } from 'zod';

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
  constructor(private readonly pool: pg.Pool) {}

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

  async profile(seniorId: string): Promise<{ interlocutor: Interlocutor; compass: Compass }> {
    const res = await this.pool.query<{ interlocutor: unknown; compass: unknown }>('SELECT interlocutor, compass FROM profiles WHERE senior_id = $1::uuid', [seniorId]);
    const row = res.rows[0];
    return { interlocutor: InterlocutorSchema.parse(row?.interlocutor ?? {}), compass: CompassSchema.parse(row?.compass ?? {}) };
  }

  async save(seniorId: string, patch: { interlocutor?: Interlocutor; compass?: Compass }): Promise<void> {
    const current = await this.profile(seniorId);
    const next = { ...current, ...patch };
    await this.pool.query(
      `INSERT INTO profiles (senior_id, interlocutor, compass) VALUES ($1, $2, $3)
       ON CONFLICT (senior_id) DO UPDATE SET interlocutor = $2, compass = $3, updated_at = now()`,
      [seniorId, JSON.stringify(next.interlocutor), JSON.stringify(next.compass)],
    );
  }
}

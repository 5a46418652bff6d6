import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { MoodCursor, PgMoodScoresRepository } from '../../../adapters/postgres/pg-mood-scores.repository.ts';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { MOOD_TIERS } from '../../../machines/memory/derivation.ts';
import { requireRole } from '../api-auth.ts';

export interface MoodRoutesOptions {
  directory: SeniorDirectory;
  moodScores: PgMoodScoresRepository;
}

export const encodeCursor = (c: MoodCursor) => Buffer.from(JSON.stringify([c.recordedAt, c.id])).toString('base64url');

/** Postgres and ISO 8601 both spell years 0001 to 9999 without a sign or an era; beyond, a date is refused by name. */
const storableYear = (d: Date) => d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999;

/** A cursor this API returns is about 90 characters: anything much longer is not one. */
const MAX_CURSOR_CHARS = 256;
const notOurCursor = 'cursor is not one this API returned (pass nextCursor as is)';

const CursorParam = z
  .string()
  .max(MAX_CURSOR_CHARS, notOurCursor)
  .transform((raw, ctx) => {
    try {
      const [recordedAt, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
      if (z.iso.datetime().safeParse(recordedAt).success && storableYear(new Date(recordedAt as string)) && z.uuid().safeParse(id).success) {
        return { recordedAt, id } as MoodCursor;
      }
    } catch {
      // falls through to the issue below
    }
    ctx.addIssue({ code: 'custom', message: notOurCursor });
    return z.NEVER;
  })
  .optional();

const instant = (name: string) =>
  z.iso
    .datetime({ offset: true, message: `${name} must be an ISO 8601 date-time, e.g. 2026-11-30T08:00:00+01:00` })
    .or(z.iso.date({ message: `${name} must be an ISO 8601 date or date-time` }))
    .transform((v) => new Date(v))
    .refine(storableYear, `${name} must fall between the years 0001 and 9999 (UTC)`)
    .optional();

const SeniorParams = z.object({ id: z.uuid({ message: 'senior id must be a UUID' }) });
const EntriesQuery = z.object({
  cursor: CursorParam,
  limit: z.coerce.number({ message: 'limit must be an integer from 1 to 200' }).int('limit must be an integer from 1 to 200').min(1, 'limit must be an integer from 1 to 200').max(200, 'limit must be an integer from 1 to 200').default(50),
  source: z.enum(['per_turn'], { message: 'source must be per_turn' }).optional(),
  from: instant('from'),
  to: instant('to'),
});
const TimelineQuery = z.object({ from: instant('from'), to: instant('to') });
const Tier = z.enum(MOOD_TIERS);
const ErrorBody = z.object({ error: z.string(), message: z.string() });

/**
 * The caregivers' dashboard: mood entries (one row per capture, summaries never transcripts)
 * and the daily timeline. `admin` reads every senior; `caregiver` only linked ones (INV-P05).
 */
export const moodRoutes: FastifyPluginAsync<MoodRoutesOptions> = async (app, { directory, moodScores }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.addHook('onRequest', requireRole(directory, 'admin', 'caregiver'));
  // Which senior a caregiver may read is authorization too: decided before the query is validated.
  r.addHook('preValidation', async (req, reply) => {
    const { id } = req.params as { id?: string };
    const principal = req.apiPrincipal!;
    if (principal.role !== 'caregiver' || !id || !z.uuid().safeParse(id).success) return;
    if (!(await directory.isLinked(principal.id, id))) return reply.code(403).send({ error: 'forbidden', message: 'this caregiver is not linked to that senior' });
  });
  r.addHook('preHandler', async (req, reply) => {
    const { id } = req.params as { id: string };
    if (req.apiPrincipal!.role === 'admin' && !(await directory.exists(id))) return reply.code(404).send({ error: 'not_found', message: 'no such senior' });
  });

  r.get(
    '/v1/admin/seniors/:id/mood-entries',
    {
      schema: {
        params: SeniorParams,
        querystring: EntriesQuery,
        response: {
          200: z.object({
            seniorId: z.string(),
            data: z.array(z.object({ id: z.string(), score: z.number(), tier: Tier, source: z.string(), summary: z.string().nullable(), recordedAt: z.string() })),
            nextCursor: z.string().nullable(),
          }),
          403: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (req) => {
      const { cursor, ...q } = req.query;
      const page = await moodScores.entries(req.params.id, { ...q, after: cursor });
      return { seniorId: req.params.id, data: page.data, nextCursor: page.next ? encodeCursor(page.next) : null };
    },
  );

  r.get(
    '/v1/admin/seniors/:id/mood-timeline',
    {
      schema: {
        params: SeniorParams,
        querystring: TimelineQuery,
        response: {
          200: z.object({
            seniorId: z.string(),
            timezone: z.literal('Europe/Paris'),
            days: z.array(z.object({ day: z.string(), average: z.number(), min: z.number(), max: z.number(), count: z.number(), dominantTier: Tier })),
          }),
          403: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (req) => ({ seniorId: req.params.id, timezone: 'Europe/Paris' as const, days: await moodScores.timeline(req.params.id, req.query) }),
  );
};

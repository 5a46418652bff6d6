import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PgMoodScoresRepository } from '../../../adapters/postgres/pg-mood-scores.repository.ts';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { MOOD_TIERS } from '../../../machines/memory/derivation.ts';
import { ALERT_WINDOW_DAYS, type MoodAlert } from '../../../machines/memory/mood-alerts.ts';
import { requireRoleOnRoutes } from '../api-auth.ts';
import { CursorParam, encodeCursor, LimitParam, storableYear } from './keyset-cursor.ts';
import { seniorReadAccess } from './senior-access.ts';

export interface MoodRoutesOptions {
  directory: SeniorDirectory;
  moodScores: PgMoodScoresRepository;
  /** The senior's mood alerts over the last ALERT_WINDOW_DAYS days, the latest start first (CaregiverAlerts.shown). */
  alerts: (seniorId: string) => Promise<MoodAlert[]>;
}

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
  limit: LimitParam,
  source: z.enum(['per_turn'], { message: 'source must be per_turn' }).optional(),
  from: instant('from'),
  to: instant('to'),
});
const TimelineQuery = z.object({ from: instant('from'), to: instant('to') });
const Tier = z.enum(MOOD_TIERS);
const ErrorBody = z.object({ error: z.string(), message: z.string() });
const Day = z.string().describe('YYYY-MM-DD, Europe/Paris');
const Episode = {
  open: z.boolean().describe('no later day with a score has ended it yet'),
  from: Day.describe('its first day with a score (YYYY-MM-DD, Europe/Paris)'),
  to: Day.describe('its last day with a score (YYYY-MM-DD, Europe/Paris)'),
  days: z.number().int().describe('its days with a score'),
};
const Alert = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tier_streak'), ...Episode, tier: z.literal('preoccupant') }),
  z.object({
    kind: z.literal('weekly_drop'),
    ...Episode,
    previousAverage: z.number().describe('the mean daily average of the 7 days before the week ending on `to`'),
    average: z.number().describe('the mean daily average of the 7 days ending on `to`'),
    drop: z.number().describe('previousAverage − average, in points'),
  }),
]);

/**
 * The caregivers' dashboard: mood entries (one row per capture, summaries never transcripts),
 * the daily timeline and the alerts read from it (numbers only). `admin` reads every senior; `caregiver` only linked ones (INV-P05), and
 * their summaries only under the `conversation` consent (INV-C01).
 */
export const moodRoutes: FastifyPluginAsync<MoodRoutesOptions> = async (app, { directory, moodScores, alerts }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  requireRoleOnRoutes(r, directory, 'admin', 'caregiver');
  const access = seniorReadAccess(directory);
  r.addHook('preValidation', access.preValidation);
  r.addHook('preHandler', access.preHandler);

  r.get(
    '/v1/admin/seniors/:id/mood-entries',
    {
      schema: {
        description:
          'Mood entries, newest first, keyset-paginated. A caregiver reads no summary (null) while the senior’s conversation consent is revoked: summaries are derived from the conversation; scores and tiers stay.',
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
      const consentedOnly = req.apiPrincipal!.role === 'caregiver';
      const page = await moodScores.entries(req.params.id, { ...q, after: cursor && { recordedAt: cursor.at, id: cursor.id }, consentedOnly });
      return { seniorId: req.params.id, data: page.data, nextCursor: page.next ? encodeCursor({ at: page.next.recordedAt, id: page.next.id }) : null };
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

  r.get(
    '/v1/admin/seniors/:id/mood-alerts',
    {
      schema: {
        description: `The senior’s mood alert episodes that reach into the last ${ALERT_WINDOW_DAYS} days (Europe/Paris), the latest start first: a streak of days whose dominant tier is preoccupant (CAREGIVER_ALERT_STREAK_DAYS), a drop of the weekly average (CAREGIVER_ALERT_WEEKLY_DROP). A day without a score neither starts nor ends an episode.`,
        params: SeniorParams,
        response: {
          200: z.object({ seniorId: z.string(), alerts: z.array(Alert) }),
          403: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (req) => ({ seniorId: req.params.id, alerts: await alerts(req.params.id) }),
  );
};

import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PgMemoryFactsRepository } from '../../../adapters/postgres/pg-memory-facts.repository.ts';
import type { PgSeniorExportRepository } from '../../../adapters/postgres/pg-senior-export.repository.ts';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { FACT_CATEGORIES } from '../../../machines/memory/memory.port.ts';
import { requireRole } from '../api-auth.ts';
import { CursorParam, encodeCursor, LimitParam } from './keyset-cursor.ts';
import { seniorReadAccess } from './senior-access.ts';

export interface SeniorDataRoutesOptions {
  directory: SeniorDirectory;
  facts: PgMemoryFactsRepository;
  exports: PgSeniorExportRepository;
}

const SeniorParams = z.object({ id: z.uuid({ message: 'senior id must be a UUID' }) });
const ErrorBody = z.object({ error: z.string(), message: z.string() });
const FactView = z.object({
  id: z.string(),
  content: z.string(),
  category: z.enum(FACT_CATEGORIES),
  createdAt: z.string(),
  /** When a later fact superseded it; null while it holds. */
  invalidAt: z.string().nullable(),
  valid: z.boolean(),
});
const Row = z.record(z.string(), z.unknown());

/**
 * A senior's data, visible (RGPD art. 15 and 20): the facts kept about them — derived text, never a
 * transcript — to admins and their linked caregivers, and everything the database holds for them,
 * as one document, to admins.
 */
export const seniorDataRoutes: FastifyPluginAsync<SeniorDataRoutesOptions> = async (app, { directory, facts, exports }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const access = seniorReadAccess(directory);

  r.get(
    '/v1/admin/seniors/:id/facts',
    {
      onRequest: requireRole(directory, 'admin', 'caregiver'),
      preValidation: access.preValidation,
      preHandler: access.preHandler,
      schema: {
        description:
          'The facts kept about the senior, newest first, keyset-paginated (pass nextCursor back as cursor). Superseded facts are listed with invalidAt (they are never recalled). A caregiver sees only the categories whose consent is active.',
        params: SeniorParams,
        querystring: z.object({ cursor: CursorParam, limit: LimitParam }),
        response: { 200: z.object({ seniorId: z.string(), data: z.array(FactView), nextCursor: z.string().nullable() }), 403: ErrorBody, 404: ErrorBody },
      },
    },
    async (req) => {
      const { cursor, limit } = req.query;
      const consentedOnly = req.apiPrincipal!.role === 'caregiver';
      const page = await facts.page(req.params.id, { limit, after: cursor && { createdAt: cursor.at, id: cursor.id }, consentedOnly });
      return {
        seniorId: req.params.id,
        data: page.data.map((f) => ({ ...f, valid: f.invalidAt === null })),
        nextCursor: page.next ? encodeCursor({ at: page.next.createdAt, id: page.next.id }) : null,
      };
    },
  );

  r.get(
    '/v1/admin/seniors/:id/export',
    {
      onRequest: requireRole(directory, 'admin'),
      schema: {
        description:
          'Every row the runtime’s database holds for the senior, as one JSON document: the senior row and every table erasure deletes from (the same list), each row as stored, less embedding vectors and token hashes (named in omitted).',
        params: SeniorParams,
        response: {
          200: z.object({
            seniorId: z.string(),
            exportedAt: z.string(),
            senior: Row,
            tables: z.record(z.string(), z.array(Row)),
            omitted: z.record(z.string(), z.array(z.string())),
          }),
          404: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const exported = await exports.export(req.params.id);
      if (!exported.senior) return reply.code(404).send({ error: 'not_found', message: 'no such senior' });
      return { seniorId: req.params.id, exportedAt: new Date().toISOString(), senior: exported.senior, tables: exported.tables, omitted: exported.omitted };
    },
  );
};

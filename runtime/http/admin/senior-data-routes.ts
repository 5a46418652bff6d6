import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PgMemoryFactsRepository } from '../../../adapters/postgres/pg-memory-facts.repository.ts';
import type { PgSeniorExportRepository } from '../../../adapters/postgres/pg-senior-export.repository.ts';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { CONSENT_CATEGORIES, FACT_CATEGORIES } from '../../../machines/memory/memory.port.ts';
import { requireRole } from '../api-auth.ts';
import { ExportGate, type ExportGateSettings, type Refusal } from './export-gate.ts';
import { streamExport, type ExportStreamSettings } from './export-stream.ts';
import { CursorParam, encodeCursor, LimitParam } from './keyset-cursor.ts';
import { seniorReadAccess } from './senior-access.ts';

export interface SeniorDataRoutesOptions {
  directory: SeniorDirectory;
  facts: PgMemoryFactsRepository;
  exports: PgSeniorExportRepository;
  exportLimits: ExportGateSettings & ExportStreamSettings;
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
const ConsentSectionView = z.object({
  consent: z.enum(CONSENT_CATEGORIES).nullable(),
  granted: z.boolean().nullable(),
  grantedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  basis: z.string().optional(),
  holds: z.array(z.object({ table: z.string(), where: z.record(z.string(), z.string()).optional(), columns: z.array(z.string()).optional(), note: z.string().optional() })),
});

/**
 * A senior's data, visible (RGPD art. 15 and 20): the facts kept about them — derived text, never a
 * transcript — to admins and their linked caregivers, and everything the database holds for them,
 * as one document, to admins.
 */
export const seniorDataRoutes: FastifyPluginAsync<SeniorDataRoutesOptions> = async (app, { directory, facts, exports, exportLimits }) => {
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
          'The facts kept about the senior, newest first, keyset-paginated (pass nextCursor back as cursor). Superseded facts are listed with invalidAt (they are never recalled). A caregiver sees none while the senior’s conversation consent is revoked (facts are derived from the conversation), then only the categories whose consent is active.',
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

  const gate = new ExportGate(exportLimits);
  r.get(
    '/v1/admin/seniors/:id/export',
    {
      onRequest: requireRole(directory, 'admin'),
      schema: {
        description:
          'Every row the runtime’s database holds for the senior, as one JSON document streamed while it is read: the senior row and every table erasure deletes from (the same list), each row as stored, less embedding vectors and token hashes (named in omitted); consents says under which consent each part was collected and whether it is granted now. A few exports run at once (EXPORT_CONCURRENCY) and a few wait (EXPORT_QUEUE); past that, or after EXPORT_QUEUE_WAIT_MS waiting, 503 with Retry-After. A document cut short ends with the connection closed, never with valid JSON.',
        params: SeniorParams,
        response: {
          200: z.object({
            seniorId: z.string(),
            exportedAt: z.string(),
            senior: Row,
            consents: z.array(ConsentSectionView),
            omitted: z.record(z.string(), z.array(z.string())),
            tables: z.record(z.string(), z.array(Row)),
          }),
          404: ErrorBody,
          503: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      const release = await gate.enter(gone.signal, () => req.log.info({ seniorId: req.params.id, ...gate.counts }, 'senior export waiting for its turn'));
      if (typeof release === 'string') {
        req.log.warn({ seniorId: req.params.id, refused: release, ...gate.counts }, 'senior export refused');
        return reply.code(503).header('retry-after', String(EXPORT_RETRY_AFTER_S)).send({ error: 'export_busy', message: refusalMessage(release, exportLimits) });
      }
      try {
        const senior = await exports.senior(req.params.id);
        if (!senior) return reply.code(404).send({ error: 'not_found', message: 'no such senior' });
        reply.hijack();
        const started = performance.now();
        const { error, ...result } = await streamExport(reply.raw, exports, req.params.id, senior, gone.signal, exportLimits);
        const done = { seniorId: req.params.id, ...result, ms: Math.round(performance.now() - started) };
        if (error) req.log.error({ ...done, err: error }, 'senior export failed after its first byte');
        else req.log.info(done, 'senior export ended');
        return reply;
      } finally {
        release();
      }
    },
  );
};

/** Seconds a refused export is told to wait: about what a large export takes (bench:export). */
const EXPORT_RETRY_AFTER_S = 10;

const refusalMessage = (why: Refusal, limits: ExportGateSettings) =>
  why === 'timeout'
    ? `no export could start within ${limits.waitMs} ms (${limits.concurrency} at once): retry later`
    : `${limits.concurrency} exports are running and ${limits.queue} waiting: retry later`;

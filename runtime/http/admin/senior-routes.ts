import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { PgConsentAdapter } from '../../../adapters/postgres/pg-consent.adapter.ts';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';
import { CONSENT_CATEGORIES, FACT_CATEGORIES, type MemoryPort } from '../../../machines/memory/memory.port.ts';
import { requireRole, requireRoleOnRoutes } from '../api-auth.ts';
import { seniorReadAccess } from './senior-access.ts';
import type { SeniorErasure } from '../../sessions/erasure.ts';

export interface SeniorRoutesOptions {
  directory: SeniorDirectory;
  consents: PgConsentAdapter;
  memory: MemoryPort;
  erasure: SeniorErasure;
  /** A consent of the senior changed: drop what may carry what it covered (cached replies). */
  onConsentChange: (seniorId: string) => void;
}

const SeniorParams = z.object({ id: z.uuid({ message: 'senior id must be a UUID' }) });
const ConsentParams = SeniorParams.extend({ category: z.enum(CONSENT_CATEGORIES, { message: `category must be one of ${CONSENT_CATEGORIES.join(', ')}` }) });
const ConsentRecord = z.object({ category: z.enum(CONSENT_CATEGORIES), active: z.boolean(), grantedAt: z.string(), revokedAt: z.string().nullable() });
const ErrorBody = z.object({ error: z.string(), message: z.string() });
const FactBody = z.object({
  content: z.string().trim().min(1).max(1000),
  category: z.enum(FACT_CATEGORIES, { message: `category must be one of ${FACT_CATEGORIES.join(', ')}` }),
});

const StoredFact = z.object({ id: z.string(), seniorId: z.string(), content: z.string(), category: z.enum(FACT_CATEGORIES), created: z.boolean() });

const notFound = { error: 'not_found', message: 'no such senior' };

/** Admin routes on one senior: consents (INV-C01), facts, and erasure (RGPD). Role `admin` only, but for reading the consents. */
export const seniorRoutes: FastifyPluginAsync<SeniorRoutesOptions> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Declared before the admin-only hook below, which guards only the routes declared after it:
  // a linked caregiver reads the consents as given (the caregivers' page), never changes them.
  const access = seniorReadAccess(opts.directory);
  r.get(
    '/v1/admin/seniors/:id/consents',
    {
      onRequest: requireRole(opts.directory, 'admin', 'caregiver'),
      preValidation: access.preValidation,
      preHandler: access.preHandler,
      schema: { params: SeniorParams, response: { 200: z.object({ seniorId: z.string(), consents: z.array(ConsentRecord) }), 403: ErrorBody, 404: ErrorBody } },
    },
    async (req) => ({ seniorId: req.params.id, consents: await opts.consents.list(req.params.id) }),
  );

  requireRoleOnRoutes(r, opts.directory, 'admin');

  r.put(
    '/v1/admin/seniors/:id/consents/:category',
    { schema: { params: ConsentParams, response: { 200: ConsentRecord, 404: ErrorBody } } },
    async (req, reply) => {
      if (!(await opts.directory.exists(req.params.id))) return reply.code(404).send(notFound);
      const granted = await opts.consents.grant(req.params.id, req.params.category);
      opts.onConsentChange(req.params.id);
      return granted;
    },
  );

  r.delete(
    '/v1/admin/seniors/:id/consents/:category',
    { schema: { params: ConsentParams, response: { 200: ConsentRecord, 404: ErrorBody } } },
    async (req, reply) => {
      const revoked = await opts.consents.revoke(req.params.id, req.params.category);
      if (revoked) opts.onConsentChange(req.params.id);
      return revoked ?? reply.code(404).send({ error: 'not_found', message: `no ${req.params.category} consent was ever granted for this senior` });
    },
  );

  r.post(
    '/v1/admin/seniors/:id/facts',
    {
      schema: {
        params: SeniorParams,
        body: FactBody,
        // 201: stored; 200: the senior already holds this fact (the same content, or the same meaning), which is returned.
        response: { 201: StoredFact, 200: StoredFact, 404: ErrorBody },
      },
    },
    async (req, reply) => {
      if (!(await opts.directory.exists(req.params.id))) return reply.code(404).send(notFound);
      const { id, seniorId, content, category, created } = await opts.memory.persist({ seniorId: req.params.id, ...req.body });
      return reply.code(created ? 201 : 200).send({ id, seniorId, content, category, created });
    },
  );

  r.delete(
    '/v1/admin/seniors/:id/data',
    { schema: { params: SeniorParams, response: { 200: z.object({ seniorId: z.string(), erased: z.record(z.string(), z.number()) }) } } },
    async (req) => ({ seniorId: req.params.id, erased: await opts.erasure.erase(req.params.id) }),
  );
};

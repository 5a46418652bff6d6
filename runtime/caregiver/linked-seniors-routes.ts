import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { requireRoleOnRoutes } from '../http/api-auth.ts';

export interface LinkedSeniorsRoutesOptions {
  directory: SeniorDirectory;
}

const ErrorBody = z.object({ error: z.string(), message: z.string() });

/**
 * What a caregiver token opens: its own linked seniors (INV-P05), the list the caregivers' page
 * starts from. Role `caregiver` only: an admin or an operator is linked to no one.
 */
export const linkedSeniorsRoutes: FastifyPluginAsync<LinkedSeniorsRoutesOptions> = async (app, { directory }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  requireRoleOnRoutes(r, directory, 'caregiver');

  r.get(
    '/v1/caregiver/seniors',
    {
      schema: {
        description:
          'The seniors linked to this caregiver token (`npm run cli -- caregiver:link`), by the name the companion uses, else the name they were registered under; alphabetically. An admin or operator token is linked to no one: 403.',
        response: { 200: z.object({ data: z.array(z.object({ id: z.string(), name: z.string() })) }), 403: ErrorBody },
      },
    },
    async (req) => ({ data: await directory.linkedSeniors(req.apiPrincipal!.id) }),
  );
};

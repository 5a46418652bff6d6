import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SeniorDirectory } from '../../../adapters/postgres/senior-directory.ts';

/**
 * The hooks of a route on one senior (`:id`) that admins and the senior's linked caregivers may
 * read (INV-P05), after `requireRole(directory, 'admin', 'caregiver')`. Which senior a caregiver
 * may read is authorization too: decided before the query is validated (a caregiver not linked
 * gets 403, whether the senior exists or not); an admin asking for an unknown senior gets 404.
 */
export function seniorReadAccess(directory: SeniorDirectory) {
  return {
    preValidation: async (req: FastifyRequest, reply: FastifyReply) => {
      const { id } = req.params as { id?: string };
      const principal = req.apiPrincipal!;
      if (principal.role !== 'caregiver' || !id || !z.uuid().safeParse(id).success) return;
      if (!(await directory.isLinked(principal.id, id))) return reply.code(403).send({ error: 'forbidden', message: 'this caregiver is not linked to that senior' });
    },
    preHandler: async (req: FastifyRequest, reply: FastifyReply) => {
      const { id } = req.params as { id: string };
      if (req.apiPrincipal!.role === 'admin' && !(await directory.exists(id))) return reply.code(404).send({ error: 'not_found', message: 'no such senior' });
    },
  };
}

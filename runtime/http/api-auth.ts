import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiRole, SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { bearerToken, hasQueryToken } from './bearer.ts';

declare module 'fastify' {
  interface FastifyRequest {
    apiPrincipal?: { id: string; role: ApiRole };
  }
}

/**
 * A hook admitting bearer API tokens of the given roles: 401 without a valid token, 403 for another role.
 * Install it as `onRequest`: that runs before the body is parsed and before any schema validation, so a
 * caller without the right token learns nothing about the route's parameters (a preHandler would run
 * after validation and answer 400 with schema details first).
 */
export function requireRole(directory: SeniorDirectory, ...roles: ApiRole[]) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request, { query: request.routeOptions.config.tokenInQuery === true });
    const principal = token ? await directory.roleForApiToken(token) : null;
    if (!principal) {
      const message = token
        ? 'unknown API token'
        : hasQueryToken(request)
          ? '?token= is accepted on WebSocket upgrades only: send Authorization: Bearer <token>'
          : 'missing API token (Authorization: Bearer <token>)';
      return reply.code(401).send({ error: 'unauthorized', message });
    }
    if (!roles.includes(principal.role)) {
      return reply.code(403).send({ error: 'forbidden', message: `this route requires role ${roles.join(' or ')}; the token has role ${principal.role}` });
    }
    request.apiPrincipal = principal;
  };
}

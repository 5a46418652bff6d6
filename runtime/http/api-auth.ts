import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
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
export function requireRole(directory: SeniorDirectory, ...roles: ApiRole[]): RoleHook {
  const hook = async (request: FastifyRequest, reply: FastifyReply) => {
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
  // The roles travel with the hook: the OpenAPI document says them on each operation it guards.
  return Object.assign(hook, { roles });
}

/** A `requireRole` hook, with the roles it admits. */
export type RoleHook = ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) & { roles: readonly ApiRole[] };

/**
 * `requireRole` on every route the plugin declares after this call, as each route's own first
 * `onRequest` hook: the same check as a plugin-wide hook, and visible to the OpenAPI document.
 */
export function requireRoleOnRoutes(app: FastifyInstance, directory: SeniorDirectory, ...roles: ApiRole[]): void {
  const hook = requireRole(directory, ...roles);
  app.addHook('onRoute', (route) => {
    route.onRequest = [hook as onRequestHookHandler, ...[route.onRequest ?? []].flat()];
  });
}

/** The roles a route admits, when a `requireRole` hook guards it. */
export function rolesOf(onRequest: unknown): readonly ApiRole[] | null {
  return ([onRequest ?? []].flat() as Array<Partial<RoleHook>>).find((h) => Array.isArray(h.roles))?.roles ?? null;
}

import type { FastifyRequest } from 'fastify';

/** `Authorization: Bearer <token>`, or `?token=` for clients that cannot set headers on an upgrade. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice(7).trim() || null;
  const query = request.query as { token?: unknown } | undefined;
  return typeof query?.token === 'string' && query.token ? query.token : null;
}

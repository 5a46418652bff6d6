import type { FastifyRequest } from 'fastify';

/** The auth scheme is case-insensitive (RFC 7235 §2.1): `Bearer`, `bearer`, `BEARER`, with any run of spaces after it. */
const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** `Authorization: Bearer <token>`, or `?token=` for clients that cannot set headers on an upgrade. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization?.trim();
  const match = header ? BEARER.exec(header) : null;
  if (match) return match[1]!;
  const query = request.query as { token?: unknown } | undefined;
  return typeof query?.token === 'string' && query.token ? query.token : null;
}

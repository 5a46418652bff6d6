import type { FastifyRequest } from 'fastify';

/** The auth scheme is case-insensitive (RFC 7235 §2.1): `Bearer`, `bearer`, `BEARER`, with any run of spaces after it. */
const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route also takes its token as `?token=`: only WebSocket upgrades, since a browser cannot set
     * headers on one (the kiosk page, the ops console's stream). Elsewhere a token in a URL would end
     * up in proxies' logs and browser histories: `Authorization` only.
     */
    tokenInQuery?: boolean;
  }
}

/**
 * `Authorization: Bearer <token>`; with `query`, also `?token=` (WebSocket upgrades only: a client
 * cannot set headers on those).
 */
export function bearerToken(request: FastifyRequest, options: { query?: boolean } = {}): string | null {
  const header = request.headers.authorization?.trim();
  const match = header ? BEARER.exec(header) : null;
  if (match) return match[1]!;
  if (!options.query) return null;
  const query = request.query as { token?: unknown } | undefined;
  return typeof query?.token === 'string' && query.token ? query.token : null;
}

/** The request carries `?token=` (whether or not the route takes it). */
export function hasQueryToken(request: FastifyRequest): boolean {
  const query = request.query as { token?: unknown } | undefined;
  return query?.token !== undefined;
}

import type { FastifyReply, FastifyRequest } from 'fastify';

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };

/**
 * A browser names the page that opens a WebSocket in `Origin`; a WebSocket upgrade is not subject to
 * CORS, so without this check any web page could open a kiosk or operator socket with a token it
 * holds (or one the browser sends for it). Refused: an `Origin` present whose host (and port) is not
 * the request's `Host`, including the opaque `null`. Kiosks and tools outside a browser send no
 * `Origin` and are not concerned. Behind a reverse proxy, the proxy must pass `Host` through.
 */
export function isCrossOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  const host = request.headers.host;
  if (!host) return true;
  let from: URL;
  let to: URL;
  try {
    from = new URL(origin);
    to = new URL(`${from.protocol}//${host}`);
  } catch {
    return true;
  }
  const port = (u: URL) => u.port || DEFAULT_PORTS[u.protocol] || '';
  return from.hostname.toLowerCase() !== to.hostname.toLowerCase() || port(from) !== port(to);
}

export const CROSS_ORIGIN_REFUSAL = { error: 'forbidden', message: 'cross-origin WebSocket upgrade refused: open this socket from a page of this host' } as const;

/** An `onRequest` hook for WebSocket routes: 403 for a cross-origin browser upgrade. */
export async function refuseCrossOrigin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (isCrossOrigin(request)) return reply.code(403).send(CROSS_ORIGIN_REFUSAL);
  return undefined;
}

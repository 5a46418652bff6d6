import { KioskError } from './errors.ts';

/**
 * The little of a WebSocket the client uses: the browser's, Node's global one (undici) and the `ws`
 * package's all have it. `httpStatus` and `probeUpgrade` are this package's own, for a refused
 * upgrade: a factory that can see the HTTP answer sets `httpStatus` before the close (`ws`); one that
 * cannot (browsers, Node's global WebSocket: a refusal closes with 1006, as an unreachable host does)
 * sets `probeUpgrade`, which the client calls after such a close to ask the server over plain HTTP.
 */
export interface SocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  httpStatus?: number;
  /** The HTTP status the server answers this socket's URL and token with, or null when nothing answers within `timeoutMs`. */
  probeUpgrade?: (timeoutMs: number) => Promise<number | null>;
}

/** Opens the kiosk socket for `url` with the device `token`. */
export type SocketFactory = (url: string, token: string) => SocketLike;

export const OPEN = 1;

/** The Node version whose global WebSocket this package is built and tested on (package.json `engines`). */
export const NODE_NEEDED = '24.11';

type WebSocketClass = new (url: string | URL, init?: unknown) => SocketLike;

/** The platform's WebSocket class, or `unsupported_platform` naming what is needed (an old Node has none). */
export function platformWebSocket(): WebSocketClass {
  const ws = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof ws === 'function') return ws as WebSocketClass;
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
  throw new KioskError(
    'unsupported_platform',
    node
      ? `Node ${node} has no global WebSocket: @kohami/kiosk-client needs Node ${NODE_NEEDED} or later (or pass socket: wsSocket(WebSocket) from @kohami/kiosk-client/node with the ws package)`
      : 'this platform has no WebSocket: pass a `socket` factory that opens one',
  );
}

/**
 * What the server answers, as plain HTTP, to `url` (ws:// or wss://, as http:// or https://) with
 * `headers`: its status, or null when nothing answers within `timeoutMs` (refused port, DNS, TLS …).
 * A kohami runtime answers a kiosk GET with the refusal its upgrade got (401, 403, 429, 503), or 404
 * once the token passed. The body is not read.
 */
export async function httpAnswer(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<number | null> {
  const http = new URL(url);
  http.protocol = http.protocol === 'wss:' ? 'https:' : 'http:';
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const res = await fetch(http, { headers, redirect: 'manual', cache: 'no-store', signal: abort.signal });
    await res.body?.cancel();
    return res.status;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The default: the platform's WebSocket with the token as `?token=` (docs/protocol.md: the kiosk
 * upgrade takes it there, as a browser cannot set headers). In Node prefer `headerSocket` or
 * `wsSocket` from `@kohami/kiosk-client/node`, which send `Authorization: Bearer`.
 */
export const queryTokenSocket: SocketFactory = (url, token) => {
  const withToken = new URL(url);
  withToken.searchParams.set('token', token);
  const socket = new (platformWebSocket())(withToken);
  socket.probeUpgrade = (timeoutMs) => httpAnswer(withToken, {}, timeoutMs);
  return socket;
};

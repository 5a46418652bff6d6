/**
 * The little of a WebSocket the client uses: the browser's, Node's global one (undici) and the `ws`
 * package's all have it. `httpStatus` is this package's own: a factory that can see the HTTP answer
 * to a refused upgrade sets it before the close (browsers and Node's global WebSocket cannot).
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
}

/** Opens the kiosk socket for `url` with the device `token`. */
export type SocketFactory = (url: string, token: string) => SocketLike;

export const OPEN = 1;

/**
 * The default: the platform's WebSocket with the token as `?token=` (docs/protocol.md: the kiosk
 * upgrade takes it there, as a browser cannot set headers). In Node prefer `headerSocket` or
 * `wsSocket` from `@kohami/kiosk-client/node`, which send `Authorization: Bearer`.
 */
export const queryTokenSocket: SocketFactory = (url, token) => {
  const withToken = new URL(url);
  withToken.searchParams.set('token', token);
  return new WebSocket(withToken) as unknown as SocketLike;
};

import { readdir, readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import type { FastifyPluginAsync } from 'fastify';
import { bearerToken } from '../http/bearer.ts';
import { BROWSER_HEADERS, servePageFiles } from '../http/page-headers.ts';

const page = (file: string) => new URL(`./page/${file}`, import.meta.url);
const JS = 'text/javascript; charset=utf-8';
/** The kiosk client package's source, served to the page under CLIENT_PATH. */
const CLIENT_SRC = new URL('../../packages/kiosk-client/src/', import.meta.url);
export const CLIENT_PATH = '/kiosk/client/';

/** The page and its script, read once at start: plain files, no build step. */
const FILES = {
  '/kiosk': [page('kiosk.html'), 'text/html; charset=utf-8'],
  '/kiosk/kiosk.js': [page('kiosk.js'), JS],
  '/kiosk/kiosk-reconnect.js': [page('kiosk-reconnect.js'), JS],
} as const;

/**
 * `@kohami/kiosk-client`'s modules for the browser, read and stripped of their types once at start
 * (Node's own type stripping: the package is erasable TypeScript, so no build step): each under its
 * source path, `.ts` kept, so their relative imports resolve as they are. The capture worklet imports
 * the runtime's own resampler from next to itself: served as it is from machines/ (plain JavaScript).
 */
async function clientModules(): Promise<Map<string, string>> {
  const modules = new Map<string, string>();
  for (const entry of await readdir(CLIENT_SRC, { recursive: true })) {
    if (!entry.endsWith('.ts') || entry.endsWith('.d.ts')) continue;
    const code = await readFile(new URL(entry, CLIENT_SRC), 'utf8');
    modules.set(`${CLIENT_PATH}${entry.split('\\').join('/')}`, stripTypes(code));
  }
  modules.set(`${CLIENT_PATH}browser/sinc-resampler.js`, await readFile(new URL('../../machines/voice/sinc-resampler.js', import.meta.url), 'utf8'));
  return modules;
}

/**
 * Node's own type stripping — what already runs every .ts file of this process — without the
 * "experimental feature" warning its API prints once, which would greet every `npm start`.
 * Synchronous, so nothing else can warn while the hook is off.
 */
function stripTypes(code: string): string {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return stripTypeScriptTypes(code);
  } finally {
    process.emitWarning = emitWarning;
  }
}

export interface KioskPageOptions {
  /** The gateway's own lookup: the senior a device token opens sessions for, or null. */
  seniorForToken: (token: string) => Promise<string | null>;
}

/**
 * The browser kiosk `/kiosk` (voice mode over /v1/kiosk); the token travels in the socket's `?token=`.
 * `/kiosk/token-check` tells the page why its socket did not open — a browser cannot see the 401 of a
 * refused upgrade: 204 for a token the runtime knows, 401 for one it does not (the upgrade's own
 * answer, so it tells an attacker nothing the socket does not), 503 when it cannot check now.
 */
export const kioskPage: FastifyPluginAsync<KioskPageOptions> = async (app, opts) => {
  await servePageFiles(app, FILES);
  for (const [path, body] of await clientModules()) {
    app.get(path, { schema: { hide: true } }, async (_req, reply) => reply.headers(BROWSER_HEADERS).type(JS).send(body));
  }
  app.get('/kiosk/token-check', { schema: { hide: true } }, async (request, reply) => {
    reply.headers(BROWSER_HEADERS).header('cache-control', 'no-store');
    const token = bearerToken(request);
    let seniorId: string | null;
    try {
      seniorId = token ? await opts.seniorForToken(token) : null;
    } catch (err) {
      request.log.warn({ err }, 'kiosk token check failed');
      return reply.code(503).header('retry-after', '2').send({ error: 'unavailable', message: 'the runtime cannot check kiosk tokens right now; retry' });
    }
    if (!seniorId) return reply.code(401).send({ error: 'unauthorized', message: token ? 'unknown kiosk token' : 'missing kiosk token (Authorization: Bearer)' });
    return reply.code(204).send();
  });
};

import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';
import { BROWSER_HEADERS, pageHeaders } from '../http/page-headers.ts';

/** The page and its scripts, read once at start: plain files, no build step. */
const FILES = {
  '/kiosk': ['kiosk.html', 'text/html; charset=utf-8'],
  '/kiosk/kiosk.js': ['kiosk.js', 'text/javascript; charset=utf-8'],
  '/kiosk/reply-player.js': ['reply-player.js', 'text/javascript; charset=utf-8'],
  '/kiosk/audio-worklet.js': ['audio-worklet.js', 'text/javascript; charset=utf-8'],
} as const;

/** The browser kiosk `/kiosk` (voice mode over /v1/kiosk); the token travels in the socket's `?token=`. */
export const kioskPage: FastifyPluginAsync = async (app) => {
  for (const [path, [file, type]] of Object.entries(FILES)) {
    const body = await readFile(new URL(`./page/${file}`, import.meta.url), 'utf8');
    const headers = file.endsWith('.html') ? pageHeaders(body) : BROWSER_HEADERS;
    app.get(path, { schema: { hide: true } }, async (_req, reply) => reply.headers(headers).type(type).send(body));
  }
};

import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';

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
    app.get(path, { schema: { hide: true } }, async (_req, reply) => reply.type(type).send(body));
  }
};

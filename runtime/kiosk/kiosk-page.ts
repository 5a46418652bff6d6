import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';
import { BROWSER_HEADERS, pageHeaders } from '../http/page-headers.ts';

const page = (file: string) => new URL(`./page/${file}`, import.meta.url);

/**
 * The page and its scripts, read once at start: plain files, no build step. The microphone worklet
 * imports the server's own resampler, served as it is from machines/ (plain JavaScript that imports nothing).
 */
const FILES = {
  '/kiosk': [page('kiosk.html'), 'text/html; charset=utf-8'],
  '/kiosk/kiosk.js': [page('kiosk.js'), 'text/javascript; charset=utf-8'],
  '/kiosk/reply-player.js': [page('reply-player.js'), 'text/javascript; charset=utf-8'],
  '/kiosk/opus-stream.js': [page('opus-stream.js'), 'text/javascript; charset=utf-8'],
  '/kiosk/audio-worklet.js': [page('audio-worklet.js'), 'text/javascript; charset=utf-8'],
  '/kiosk/sinc-resampler.js': [new URL('../../machines/voice/sinc-resampler.js', import.meta.url), 'text/javascript; charset=utf-8'],
} as const;

/** The browser kiosk `/kiosk` (voice mode over /v1/kiosk); the token travels in the socket's `?token=`. */
export const kioskPage: FastifyPluginAsync = async (app) => {
  for (const [path, [file, type]] of Object.entries(FILES)) {
    const body = await readFile(file, 'utf8');
    const headers = file.pathname.endsWith('.html') ? pageHeaders(body) : BROWSER_HEADERS;
    app.get(path, { schema: { hide: true } }, async (_req, reply) => reply.headers(headers).type(type).send(body));
  }
};

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';

/** Every page and script the runtime serves to a browser: no sniffing, no framing, no Referer (the kiosk page's URL may hold its token). */
export const BROWSER_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
} as const;

const inlineHashes = (html: string, tag: 'script' | 'style'): string[] =>
  [...html.matchAll(new RegExp(`<${tag}(?![^>]*\\ssrc=)[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map(
    (m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`,
  );

/**
 * A page's headers: BROWSER_HEADERS and a Content-Security-Policy that admits the page's own inline
 * script and style blocks by hash and nothing else inline — an injected `<script>` or event-handler
 * attribute never runs — with scripts, worklets and sockets from this origin only.
 */
export function pageHeaders(html: string): Record<string, string> {
  const csp = [
    "default-src 'none'",
    ["script-src 'self'", ...inlineHashes(html, 'script')].join(' '),
    ["style-src 'self'", ...inlineHashes(html, 'style')].join(' '),
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { ...BROWSER_HEADERS, 'content-security-policy': csp };
}

/**
 * A browser page's plain files (no build step), read once at start and served under their paths: an
 * HTML file with its own pageHeaders, anything else with BROWSER_HEADERS; none in the API document.
 */
export async function servePageFiles(app: FastifyInstance, files: Record<string, readonly [URL, string]>): Promise<void> {
  for (const [path, [file, type]] of Object.entries(files)) {
    const body = await readFile(file, 'utf8');
    const headers = file.pathname.endsWith('.html') ? pageHeaders(body) : BROWSER_HEADERS;
    app.get(path, { schema: { hide: true } }, async (_req, reply) => reply.headers(headers).type(type).send(body));
  }
}

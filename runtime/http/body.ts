import type { FastifyInstance, FastifyRequest } from 'fastify';

type Done = (err: Error | null, body?: unknown) => void;

/** A refusal the error handler answers with 400 and this message. */
const badRequest = (message: string): Error => Object.assign(new Error(message), { statusCode: 400 });

/** How deep a path is spelled out in a message; a pathological nesting is cut, not echoed. */
const MAX_PATH_SEGMENTS = 8;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Postgres `text` and `jsonb` refuse U+0000, and a lone UTF-16 surrogate is either refused (`jsonb`)
 * or silently turned into U+FFFD (`text`): such a string is refused at the door, named.
 */
const unstorable = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

/**
 * The first string (value or key) that Postgres cannot store as sent, as a path; null if there is none.
 * Iterative: a 1 MiB body nested a million levels deep must not overflow the stack.
 */
function unstorablePath(value: unknown): string | null {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (unstorable(v)) return spell(path);
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, child] of Object.entries(v)) {
        const at = path.length < MAX_PATH_SEGMENTS ? [...path, key] : path.length === MAX_PATH_SEGMENTS ? [...path, '…'] : path;
        if (unstorable(key)) return spell(at);
        stack.push({ value: child, path: at });
      }
    }
  }
  return null;
}

/** `body persona`, `body compass.avoid.2`; a refused key is spelled with its characters escaped. */
const spell = (path: string[]) => (path.length === 0 ? 'body' : `body ${path.map((key) => (unstorable(key) ? JSON.stringify(key).slice(1, -1) : key)).join('.')}`);

/**
 * The JSON body parser for every route. Many HTTP clients send `content-type: application/json` on
 * every request, bodiless ones included (a DELETE, a consent revocation): an empty (or blank) body is
 * no body, and a route expecting one says so through its schema. Anything else is Fastify's own
 * parser (prototype-poisoning guard included), with refusals that name the problem.
 */
export function installJsonBody(app: FastifyInstance): void {
  const strict = app.getDefaultJsonParser('error', 'error') as (request: FastifyRequest, body: string, done: Done) => void;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const text = raw as string;
    if (text.trim() === '') return done(null, undefined);
    strict(request, text, (err, body) => {
      if (err) return done(badRequest(`body is not valid JSON: ${whyNotJson(text)}`));
      const at = unstorablePath(body);
      if (at) return done(badRequest(`${at}: text cannot contain the NUL character (\\u0000) or a lone UTF-16 surrogate`));
      done(null, body);
    });
  });
}

/** JSON.parse's own diagnosis (with the position); if it parses, Fastify refused a prototype key. */
function whyNotJson(text: string): string {
  try {
    JSON.parse(text);
    return 'keys "__proto__" and "constructor.prototype" are not allowed';
  } catch (err) {
    return (err as Error).message;
  }
}

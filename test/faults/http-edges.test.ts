import Fastify, { type FastifyBaseLogger } from 'fastify';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { installHttpErrors } from '../../runtime/http/errors.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { ADMIN_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The HTTP edges as a demanding client meets them: bodiless requests with a JSON content type,
 * any spelling of `Bearer`, authentication before validation, and every bad input a named 400.
 */
let rt: TestRuntime;
let marie: string;
const tokens = { admin: ADMIN_TOKEN, operator: generateToken('operator'), caregiver: generateToken('caregiver') };

interface Answer {
  status: number;
  body: { error?: string; message?: string } & Record<string, unknown>;
}

/**
 * One request with exactly the given headers and body bytes (fetch adds and normalizes headers;
 * node:http sends what it is told), on a connection of its own: `body: ''` with `content-length: 0`,
 * chunked with no chunk, or no body and no length at all.
 */
function call(method: string, path: string, opts: { token?: string | null; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  const framing = opts.body !== undefined && !opts.headers?.['transfer-encoding'] ? { 'content-length': String(Buffer.byteLength(opts.body)) } : {};
  const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...framing, ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${rt.url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : { text } });
      });
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** A senior of its own for the tests that change or erase data. */
async function newSenior(name: string): Promise<string> {
  return rt.directory.createSenior({ displayName: name, onboardingDone: true });
}

/** Every documented route, from the OpenAPI document the runtime serves (a new route is covered unasked). */
function documentedRoutes(): Array<{ method: string; path: string; params: string[]; query: string[]; bodyFields: string[] }> {
  const spec = rt.app.swagger() as {
    paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>;
  };
  return Object.entries(spec.paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        bodyFields: Object.keys(op.requestBody?.content['application/json']?.schema.properties ?? {}),
      })),
    );
}

/** Who may call a route, and a token that may not (by the route's family). */
function rolesOf(path: string, method: string): { allowed: string; refused: string[] } {
  // What a linked caregiver may read too: the mood dashboard (entries, timeline, alerts), the facts listing and the consents.
  if (/\/mood-(entries|timeline|alerts)$/.test(path) || (method === 'GET' && /\/(facts|consents)$/.test(path))) return { allowed: tokens.admin, refused: [tokens.operator] };
  // A caregiver's own: the seniors linked to its token.
  if (path.startsWith('/v1/caregiver/')) return { allowed: tokens.caregiver, refused: [tokens.admin, tokens.operator] };
  if (path.startsWith('/v1/admin/')) return { allowed: tokens.admin, refused: [tokens.operator, tokens.caregiver] };
  return { allowed: tokens.operator, refused: [tokens.caregiver] };
}

const decodes = (value: string) => {
  try {
    decodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
};
const fill = (path: string, values: Record<string, string>) => path.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? encodeURIComponent('not-a-valid-value'));

beforeAll(async () => {
  rt = await startTestRuntime({ apiDocs: true });
  marie = rt.seed!.seniorId;
  await rt.directory.addApiToken('operator', tokens.operator, 'ops');
  await rt.directory.addApiToken('caregiver', tokens.caregiver, 'aidant');
});
afterAll(() => rt.close());

describe('a bodiless request with a JSON content type is a bodiless request', () => {
  const contentTypes = ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8'];
  const emptyBodies: Array<[string, { headers: Record<string, string>; body?: string }]> = [
    ['no body and no length', { headers: {} }],
    ['content-length: 0', { headers: { 'content-length': '0' }, body: '' }],
    ['chunked with no chunk', { headers: { 'transfer-encoding': 'chunked' }, body: '' }],
    ['only whitespace', { headers: {}, body: ' \r\n\t ' }],
  ];
  const cases = contentTypes.flatMap((type) => emptyBodies.map(([shape, req]) => [`${type}, ${shape}`, { ...req, headers: { ...req.headers, 'content-type': type } }] as const));

  it.each(cases)('consent grant and revocation (%s)', async (_name, req) => {
    const senior = await newSenior('Consent');
    const granted = await call('PUT', `/v1/admin/seniors/${senior}/consents/contacts`, req);
    expect(granted).toMatchObject({ status: 200, body: { category: 'contacts', active: true } });
    const revoked = await call('DELETE', `/v1/admin/seniors/${senior}/consents/contacts`, req);
    expect(revoked).toMatchObject({ status: 200, body: { category: 'contacts', active: false } });
  });

  it.each(cases)('RGPD erasure (%s)', async (_name, req) => {
    const senior = await newSenior('Erasure');
    const erased = await call('DELETE', `/v1/admin/seniors/${senior}/data`, req);
    expect(erased).toMatchObject({ status: 200, body: { seniorId: senior, erased: { seniors: 1 } } });
    expect(await rt.directory.exists(senior)).toBe(false);
  });

  it.each(cases)('persona reset, deployment and senior (%s)', async (_name, req) => {
    const senior = await newSenior('Persona');
    expect((await call('PUT', `/v1/admin/seniors/${senior}/persona`, json({ persona: 'Tu es Léon.' }))).status).toBe(200);
    expect(await call('DELETE', `/v1/admin/seniors/${senior}/persona`, req)).toMatchObject({ status: 200, body: { source: expect.not.stringMatching(/^senior$/) } });
    expect(await call('DELETE', '/v1/admin/persona', req)).toMatchObject({ status: 200, body: { source: 'built-in' } });
  });

  it.each(cases)('reads (%s)', async (_name, req) => {
    expect((await call('GET', `/v1/admin/seniors/${marie}/consents`, req)).status).toBe(200);
    expect((await call('GET', `/v1/admin/seniors/${marie}/mood-entries`, req)).status).toBe(200);
    expect((await call('GET', '/v1/ops/sessions', { ...req, token: tokens.operator })).status).toBe(200);
  });

  it('operator close of a live session', async () => {
    const senior = await newSenior('Ops');
    const kioskToken = generateToken('kiosk');
    await rt.directory.addDevice(senior, kioskToken);
    const kiosk = await KioskClient.connect(rt.wsUrl, kioskToken);
    const { sessionId } = await kiosk.start();
    const closed = await call('POST', `/v1/ops/sessions/${String(sessionId)}/close`, { token: tokens.operator, headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': '0' }, body: '' });
    expect(closed).toMatchObject({ status: 200, body: { closed: true } });
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'operator' });
    kiosk.close();
  });

  it('a route that needs a body says so, naming it', async () => {
    const res = await call('PUT', '/v1/admin/persona', { headers: { 'content-type': 'application/json', 'content-length': '0' }, body: '' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'bad_request', message: expect.stringContaining('body') });
  });

  it.each([
    ['{"persona": ', 'not valid JSON'],
    ['{persona: "x"}', 'not valid JSON'],
    ['{"persona": "x"} trailing', 'not valid JSON'],
    ['{"__proto__": {"admin": true}, "persona": "x"}', '__proto__'],
    ['{"constructor": {"prototype": {}}, "persona": "x"}', 'constructor.prototype'],
  ])('invalid JSON %s is a 400 naming the problem', async (body, problem) => {
    const res = await call('PUT', '/v1/admin/persona', { headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'bad_request', message: expect.stringContaining(problem) });
  });
});

describe('the Bearer scheme, as RFC 7235 has it', () => {
  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('%s is accepted, with extra spaces too', async (scheme) => {
    for (const header of [`${scheme} ${ADMIN_TOKEN}`, `${scheme}    ${ADMIN_TOKEN}   `, `${scheme}\t${ADMIN_TOKEN}`]) {
      expect((await call('GET', '/v1/admin/persona', { token: null, headers: { authorization: header } })).status).toBe(200);
    }
  });

  it.each([`Basic ${ADMIN_TOKEN}`, `Bearer${ADMIN_TOKEN}`, 'Bearer', 'Bearer   ', `Bearer ${ADMIN_TOKEN} extra`, `Token ${ADMIN_TOKEN}`])('%s is not a bearer token: 401', async (header) => {
    expect(await call('GET', '/v1/admin/persona', { token: null, headers: { authorization: header } })).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
  });
});

describe('authentication before validation, on every protected route', () => {
  const garbage = { headers: { 'content-type': 'application/json' }, body: '{"persona": "\\u0000", broken' };

  it('knows the routes it checks', () => {
    const routes = documentedRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(15);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(['DELETE /v1/admin/seniors/{id}/data', 'GET /v1/admin/seniors/{id}/mood-entries', 'POST /v1/ops/sessions/{id}/close']));
  });

  it('no token, whatever the params, query and body: 401', async () => {
    for (const route of documentedRoutes()) {
      const path = `${fill(route.path, {})}?limit=-1&from=0000-01-01&cursor=%00`;
      for (const token of [null, 'an-unknown-token']) {
        const res = await call(route.method, path, { ...garbage, token });
        expect({ route: `${route.method} ${route.path}`, status: res.status, error: res.body.error }).toEqual({ route: `${route.method} ${route.path}`, status: 401, error: 'unauthorized' });
      }
    }
  });

  it('the undocumented protected routes too: /metrics and the operator stream', async () => {
    for (const path of ['/metrics?x=%00', '/v1/ops/stream?limit=-1']) {
      expect((await call('GET', path, { ...garbage, token: null })).status).toBe(401);
      expect((await call('GET', path, { ...garbage, token: tokens.caregiver })).status).toBe(403);
    }
  });

  it('a token of another role, whatever the params, query and body: 403', async () => {
    for (const route of documentedRoutes()) {
      for (const token of rolesOf(route.path, route.method).refused) {
        const res = await call(route.method, `${fill(route.path, {})}?limit=dix`, { ...garbage, token });
        expect({ route: `${route.method} ${route.path}`, status: res.status }).toEqual({ route: `${route.method} ${route.path}`, status: 403 });
      }
    }
  });

  it('a caregiver not linked to the senior: 403 before the query is looked at', async () => {
    const res = await call('GET', `/v1/admin/seniors/${marie}/mood-entries?limit=dix&from=hier`, { token: tokens.caregiver });
    expect(res).toMatchObject({ status: 403, body: { error: 'forbidden' } });
  });

  it('only then is the request validated: 400 naming the parameter', async () => {
    const res = await call('GET', `/v1/admin/seniors/${marie}/mood-entries?limit=dix`);
    expect(res).toMatchObject({ status: 400, body: { error: 'bad_request', message: expect.stringContaining('limit') } });
  });
});

describe('every bad input is a 400 naming it, never a 500', () => {
  const cursorOf = (recordedAt: string) => Buffer.from(JSON.stringify([recordedAt, '3f2c5b7e-8a4d-4c1e-9b6f-2d7a1e5c9f30'])).toString('base64url');

  it.each([
    ['cursor', cursorOf('0000-01-01T00:00:00.000000Z')],
    ['cursor', cursorOf('0000-12-31T23:59:59.999999Z')],
    ['cursor', cursorOf('2026-02-30T00:00:00.000000Z')],
    ['cursor', cursorOf('10000-01-01T00:00:00.000000Z')],
    ['cursor', '%%%not-base64%%%'],
    ['cursor', Buffer.from('[1,2,3').toString('base64url')],
    ['cursor', Buffer.from('null').toString('base64url')],
    ['cursor', 'A'.repeat(5000)],
    ['from', '0000-01-01'],
    ['from', '0000-06-01T12:00:00Z'],
    ['to', '10000-01-01'],
    ['to', '9999-12-31T23:00:00-05:00'],
    ['from', '+010000-01-01T00:00:00Z'],
  ])('mood-entries %s=%s', async (name, value) => {
    for (const route of ['mood-entries', 'mood-timeline']) {
      if (name === 'cursor' && route === 'mood-timeline') continue;
      const res = await call('GET', `/v1/admin/seniors/${marie}/${route}?${name}=${encodeURIComponent(value)}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(name);
    }
  });

  it.each([
    ['PUT', '/v1/admin/persona', { persona: 'Tu es\u0000Léon.' }, 'persona'],
    ['PUT', '/SENIOR/persona', { persona: 'Tu es Léon.\u0000' }, 'persona'],
    ['POST', '/SENIOR/facts', { content: 'sa fille\u0000Claire', category: 'contacts' }, 'content'],
    ['PUT', '/SENIOR/profile', { compass: { avoid: ['la\u0000guerre'] } }, 'compass.avoid.0'],
    ['PUT', '/SENIOR/profile', { interlocutor: { role: 'fils\u0000' } }, 'interlocutor.role'],
    ['PUT', '/SENIOR/profile', { interlocutor: { ['int\u0000erests']: [] } }, 'interlocutor.int\\u0000erests'],
    ['PUT', '/SENIOR/profile', { compass: { tone: 'doux \ud800' } }, 'compass.tone'],
    ['PUT', '/v1/admin/persona', { persona: 'x'.repeat(4001) }, 'persona'],
    ['POST', '/SENIOR/facts', { content: 'x'.repeat(1001), category: 'contacts' }, 'content'],
    ['PUT', '/SENIOR/profile', { compass: { questionsToAsk: Array.from({ length: 11 }, () => 'q') } }, 'compass.questionsToAsk'],
  ])('%s %s with %j: 400 naming %s', async (method, path, body, name) => {
    const senior = await newSenior('Texte');
    const res = await call(method, path.replace('/SENIOR', `/v1/admin/seniors/${senior}`), json(body));
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(name);
  });

  it('nothing was stored from a refused body', async () => {
    const senior = await newSenior('Rien');
    await call('PUT', `/v1/admin/seniors/${senior}/persona`, json({ persona: 'Léon\u0000' }));
    expect(await call('GET', `/v1/admin/seniors/${senior}/persona`)).toMatchObject({ status: 200, body: { source: expect.not.stringMatching(/^senior$/) } });
  });

  it('a body nested a million levels deep is refused without a crash', async () => {
    const deep = `{"persona": ${'['.repeat(500_000)}${']'.repeat(500_000)}}`;
    const res = await call('PUT', '/v1/admin/persona', { headers: { 'content-type': 'application/json' }, body: deep });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('persona');
    expect((await call('GET', '/health', { token: null })).status).toBe(200);
  });

  it('a body over the size limit is refused with 413', async () => {
    const res = await call('PUT', '/v1/admin/persona', json({ persona: 'x'.repeat(2 * 1024 * 1024) }));
    expect(res.status).toBe(413);
  });

  /** Values a demanding client tries on every parameter, as they go in a URL. None is valid for any parameter of this API. */
  const hostileValues = [
    '%00',
    'a%00b',
    'x'.repeat(8000),
    '-1',
    '0',
    '1.5',
    '1e400',
    'NaN',
    'true',
    '%5B%5D',
    '%7B%7D',
    '0000-01-01',
    '0000-01-01T00%3A00%3A00Z',
    '10000-01-01',
    '%2B010000-01-01T00%3A00%3A00Z',
    '9999-12-31T23%3A59%3A59-14%3A00',
    '%27%3B%20DROP%20TABLE%20seniors%3B%20--',
    '%ED%A0%80',
    '%FF',
    '..%2F..%2Fetc%2Fpasswd',
  ];
  /** Body values no field of this API takes (a text field refuses empty, blank, NUL and over-long strings). */
  const hostileBodies: unknown[] = [null, 0, -1, 1e308, true, [], [1, 2], '', '   ', '\u0000', 'x'.repeat(100_000), { nested: { deep: ['\u0000'] } }];

  it('fuzz: every route, every path parameter', async () => {
    for (const route of documentedRoutes()) {
      for (const param of route.params) {
        for (const value of hostileValues) {
          const path = fill(route.path, { id: marie, category: 'contacts', [param]: value });
          const res = await call(route.method, path, { token: rolesOf(route.path, route.method).allowed });
          const seen = { route: `${route.method} ${route.path}`, param, value: value.slice(0, 40), status: res.status, message: res.body.message?.slice(0, 200) };
          // The router itself refuses a path parameter over 100 characters (414, as HTTP has it) and
          // one that is not UTF-8 once decoded (400 quoting it); every other value reaches the schema.
          if (value.length > 100) expect(seen).toEqual({ ...seen, status: 414 });
          else if (!decodes(value)) expect(seen).toEqual({ ...seen, status: 400, message: expect.stringContaining(value) });
          else expect(seen).toEqual({ ...seen, status: 400, message: expect.stringContaining(param) });
        }
      }
    }
  });

  it('fuzz: every route, every query parameter (also repeated)', async () => {
    for (const route of documentedRoutes()) {
      for (const param of route.query) {
        for (const value of hostileValues) {
          const path = fill(route.path, { id: marie, category: 'contacts' });
          for (const query of [`${param}=${value}`, `${param}=${value}&${param}=2026-01-01`]) {
            const res = await call(route.method, `${path}?${query}`, { token: rolesOf(route.path, route.method).allowed });
            const seen = { route: `${route.method} ${route.path}`, query: query.slice(0, 60), status: res.status, message: res.body.message };
            expect(seen).toEqual({ ...seen, status: 400, message: expect.stringContaining(param) });
          }
        }
      }
    }
  });

  it('fuzz: every route, every body field, and whole bodies of the wrong type', async () => {
    const senior = await newSenior('Fuzz');
    for (const route of documentedRoutes()) {
      if (route.bodyFields.length === 0) continue;
      const path = fill(route.path, { id: senior, category: 'contacts' });
      const valid = route.path.endsWith('/facts') ? { content: 'aime le jardin', category: 'profil' } : route.path.endsWith('/profile') ? {} : { persona: 'Tu es Léon.' };
      for (const field of route.bodyFields) {
        for (const value of hostileBodies) {
          const res = await call(route.method, path, json({ ...valid, [field]: value }));
          const seen = { route: `${route.method} ${route.path}`, field, value: JSON.stringify(value).slice(0, 40), status: res.status, message: res.body.message };
          expect(seen).toEqual({ ...seen, status: 400, message: expect.stringContaining(field) });
        }
      }
      for (const body of hostileBodies.filter((b) => typeof b !== 'object' || b === null || Array.isArray(b))) {
        const res = await call(route.method, path, json(body));
        expect({ route: `${route.method} ${route.path}`, body: JSON.stringify(body).slice(0, 40), status: res.status }).toMatchObject({ status: 400 });
        expect(res.body.message).toContain('body');
      }
    }
  });

  it('the runtime logged no request failure through all of it', () => {
    expect(rt.logs.text).not.toContain('request failed');
    expect(rt.logs.text).not.toMatch(/"statusCode":5\d\d/);
  });
});

describe('the safety net: a Postgres data exception is a 400, never a 500', () => {
  const CASTS = { timestamptz: 'timestamptz', date: 'date', jsonb: 'jsonb', text: 'text' } as const;
  type Cast = { type: keyof typeof CASTS; value: string };
  /** A fixture route handing its input straight to Postgres, behind the runtime's own error handling. */
  async function rawQueryApp() {
    const app = Fastify({ loggerInstance: rt.logger as FastifyBaseLogger });
    installHttpErrors(app);
    const cast = async ({ type, value }: Cast) => (await rt.db.pool.query(`SELECT $1::${CASTS[type]} AS v`, [value])).rows[0];
    app.get('/cast', async (req) => cast(req.query as Cast));
    app.put('/cast', async (req) => cast(req.body as Cast));
    app.get('/missing', async () => (await rt.db.pool.query('SELECT * FROM no_such_table')).rows);
    return app;
  }
  const CANARY = 'valeur-canari-7731';

  it.each([
    ['22008 datetime field overflow', 'timestamptz', '0000-01-01 00:00:00+00'],
    ['22007 invalid datetime format', 'date', CANARY],
    ['22P05 untranslatable character', 'jsonb', `"${CANARY}\\u0000"`],
    ['22021 character not in repertoire', 'text', `${CANARY}\u0000`],
  ])('%s, in the query', async (_name, type, value) => {
    const app = await rawQueryApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/cast', query: { type, value } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'bad_request', message: expect.stringContaining("the request's query") });
      expect(res.body).not.toContain(CANARY);
    } finally {
      await app.close();
    }
    expect(rt.logs.lines.filter((l) => l.includes('the database refused a request value')).at(-1)).toMatch(/"sqlstate":"22/);
    expect(rt.logs.text).not.toContain(CANARY);
  });

  it('names the body when the value came in one', async () => {
    const app = await rawQueryApp();
    try {
      const res = await app.inject({ method: 'PUT', url: '/cast', payload: { type: 'timestamptz', value: '0000-01-01 00:00:00+00' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain("the request's body");
    } finally {
      await app.close();
    }
  });

  it('any other database error stays a 500 with no internals', async () => {
    const app = await rawQueryApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/missing' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'internal', message: 'internal error; see the runtime log' });
    } finally {
      await app.close();
    }
  });
});

import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { rolesOf } from './api-auth.ts';

/** The name of the bearer scheme every protected operation lists under `security`. */
export const BEARER_SCHEME = 'bearer';

/** The route families, in the order /docs lists them; each operation is tagged with the first whose prefix matches its path. */
export const OPENAPI_TAGS = [
  { name: 'probes', prefix: /^\/(health|ready)$/, description: 'Liveness and readiness, without a token (docs/operations.md#probes)' },
  { name: 'consents', prefix: /^\/v1\/admin\/seniors\/[^/]+\/consents/, description: 'A senior’s consent categories: granted, revoked (INV-C01)' },
  { name: 'facts', prefix: /^\/v1\/admin\/seniors\/[^/]+\/facts/, description: 'What the companion remembers of a senior' },
  { name: 'mood', prefix: /^\/v1\/admin\/seniors\/[^/]+\/mood-/, description: 'Mood captures and their daily rollup' },
  { name: 'senior data', prefix: /^\/v1\/admin\/seniors\/[^/]+\/(export|data)$/, description: 'RGPD: a senior’s data exported, or erased from every store' },
  { name: 'persona and profile', prefix: /^\/v1\/admin\/(persona|seniors\/[^/]+\/(persona|profile))$/, description: 'How the companion speaks, and what it knows of the senior' },
  { name: 'caregivers', prefix: /^\/v1\/(admin\/caregivers|caregiver\/)/, description: 'Caregivers: their tokens, issued, rotated and revoked, and the seniors each may read (INV-P05); what a caregiver token opens (the caregivers’ page /aidant)' },
  { name: 'operations', prefix: /^\/v1\/ops\//, description: 'The operator console’s API: live sessions across processes' },
] as const;

/** Each operation's description where its route has none of its own, by method and route path. */
const DESCRIPTIONS: Record<string, string> = {
  'GET /health': 'Liveness: 200 while the process runs; 503 only for what a restart cures (the embedded database’s thread died).',
  'GET /ready': 'Readiness: 200 with the Mistral region in use when the database answers and every migration is applied; 503 with the reason while shutting down, migrations pending or the database unreachable.',
  'GET /v1/admin/seniors/:id/consents': 'The senior’s consent records, one per category ever granted. A linked caregiver reads them too (a caregiver not linked: 403); only an admin changes them.',
  'PUT /v1/admin/seniors/:id/consents/:category': 'Grants (or grants again) a consent category; answers the consent record.',
  'DELETE /v1/admin/seniors/:id/consents/:category': 'Revokes a consent category: its facts stay, hidden from recall; 404 if it was never granted.',
  'POST /v1/admin/seniors/:id/facts': 'Adds a fact through the memory port: 201 when stored, 200 with the fact already held when the senior holds the same one or its meaning.',
  'DELETE /v1/admin/seniors/:id/data': 'Erasure: every row of the senior in every store, with the counts per store and table; idempotent.',
  'GET /v1/admin/seniors/:id/mood-timeline': 'Daily rollup of the mood captures over Europe/Paris days: average, minimum, maximum, count and dominant tier.',
  'GET /v1/admin/persona': 'The deployment’s persona, or the built-in one.',
  'PUT /v1/admin/persona': 'Sets the deployment’s persona.',
  'DELETE /v1/admin/persona': 'Removes the deployment’s persona: the built-in one speaks again.',
  'GET /v1/admin/seniors/:id/persona': 'The persona this senior hears: their own, else the deployment’s, else the built-in one.',
  'PUT /v1/admin/seniors/:id/persona': 'Sets the senior’s own persona, which leads over the deployment’s.',
  'DELETE /v1/admin/seniors/:id/persona': 'Removes the senior’s own persona.',
  'GET /v1/admin/seniors/:id/profile': 'What the companion knows of the senior (interlocutor) and the next session’s preparation (compass).',
  'PUT /v1/admin/seniors/:id/profile': 'Corrects the interlocutor and the compass.',
  'POST /v1/admin/caregivers': 'Creates a caregiver and its first token: 201 with the token, answered this once and stored hashed.',
  'GET /v1/admin/caregivers': 'Every caregiver, oldest first: its label, whether its token works, and the seniors it may read.',
  'POST /v1/admin/caregivers/:id/token': 'Issues the caregiver a new token (rotation, or after a revocation): the previous one stops working at once; the links stay.',
  'DELETE /v1/admin/caregivers/:id/token': 'Revokes the caregiver’s token: it stops working at once; the caregiver and its links stay, and a new token can be issued.',
  'PUT /v1/admin/caregivers/:id/seniors/:seniorId': 'Lets the caregiver read the senior’s mood data and facts (INV-P05); idempotent.',
  'DELETE /v1/admin/caregivers/:id/seniors/:seniorId': 'Stops the caregiver reading the senior: 404 when it was not linked.',
  'GET /v1/ops/sessions': 'Every live session of every runtime process sharing the database, redacted (never a word of the conversation).',
  'GET /v1/ops/sessions/:id': 'A session of this process in full (redacted), or another process’s presence row.',
  'GET /v1/ops/sessions/:id/timeline': 'A local session’s turns, latest 100: rank, start, flux, latency, barge-in and SOS reason — never a word of any turn; another process’s session: its process only.',
  'POST /v1/ops/sessions/:id/close': 'Closes a session: at once on this process (200), at the owner’s next heartbeat on another (202).',
  'GET /v1/ops/machine': 'The session machine’s state tree, as the console draws it.',
};

const ErrorBody = { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } }, required: ['error', 'message'] };

/** @fastify/swagger's document: the bearer scheme and the route families. */
export const openApiDocument: FastifyDynamicSwaggerOptions['openapi'] = {
  info: { title: 'kohami-runtime', version: '0.1.0', description: 'HTTP API of the kohami runtime. WebSocket protocols: docs/protocol.md. API tokens: `npm run cli -- token:create`.' },
  components: {
    securitySchemes: {
      [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', description: 'An API token of role admin, operator or caregiver (`npm run cli -- token:create`), as `Authorization: Bearer <token>`.' },
    },
  },
  tags: OPENAPI_TAGS.map(({ name, description }) => ({ name, description })),
};

/**
 * The zod schemas as JSON Schema, and each operation documented as the route behaves: its family's
 * tag, a description, and — when a `requireRole` hook guards it — the bearer scheme with its 401 (no
 * or unknown token) and 403 (another role) and the roles it admits, which the hook checks before the
 * request is validated.
 */
export const documentOperation: FastifyDynamicSwaggerOptions['transform'] = (input) => {
  const transformed = jsonSchemaTransform(input) as { schema?: Record<string, unknown>; url: string };
  const { url } = transformed;
  const schema = transformed.schema ?? {};
  const method = [input.route.method].flat()[0]!;
  const tag = OPENAPI_TAGS.find((t) => t.prefix.test(url))?.name;
  const out: Record<string, unknown> = { ...schema, tags: tag ? [tag] : [], description: schema.description ?? DESCRIPTIONS[`${method} ${input.route.url}`] };
  const roles = rolesOf(input.route.onRequest);
  if (roles) {
    const response = (schema.response ?? {}) as Record<string, unknown>;
    out.security = [{ [BEARER_SCHEME]: [] }];
    out['x-roles'] = roles;
    out.description = `${String(out.description ?? '')} Roles: ${roles.join(', ')}.`.trim();
    out.response = {
      // A route without response schemas answers 200 all the same: said, beside its refusals.
      ...(Object.keys(response).length === 0 ? { 200: { description: 'OK' } } : response),
      401: { description: 'No API token, or an unknown one', ...ErrorBody },
      403: response[403] ?? { description: `The token’s role is not ${roles.join(' or ')}`, ...ErrorBody },
    };
  }
  return { schema: out, url };
};

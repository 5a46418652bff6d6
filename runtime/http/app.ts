import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import type { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import type { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import type { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import type { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import type { PgSeniorExportRepository } from '../../adapters/postgres/pg-senior-export.repository.ts';
import type { SemanticCache } from '../../adapters/semantic-cache/semantic-cache.ts';
import type { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import type { MemoryPort } from '../../machines/memory/memory.port.ts';
import type { MoodAlert } from '../../machines/memory/mood-alerts.ts';
import type { sessionMachine } from '../../machines/session/session.machine.ts';
import { caregiverRoutes } from './admin/caregiver-routes.ts';
import { moodRoutes } from './admin/mood-routes.ts';
import { profileRoutes } from './admin/profile-routes.ts';
import { seniorDataRoutes, type SeniorDataRoutesOptions } from './admin/senior-data-routes.ts';
import { seniorRoutes } from './admin/senior-routes.ts';
import type { SeniorErasure } from '../sessions/erasure.ts';
import { healthRoutes } from './health.ts';
import { documentOperation, openApiDocument } from './openapi.ts';
import { BROWSER_HEADERS, pageHeaders } from './page-headers.ts';
import { installHttpErrors } from './errors.ts';
import { caregiverPage } from '../caregiver/caregiver-page.ts';
import { linkedSeniorsRoutes } from '../caregiver/linked-seniors-routes.ts';
import { kioskGateway } from '../kiosk/gateway.ts';
import type { SeniorLimitSettings } from '../kiosk/senior-limits.ts';
import { kioskPage } from '../kiosk/kiosk-page.ts';
import { MAX_FRAME_BYTES } from '../protocol/messages.ts';
import type { Metrics } from '../metrics.ts';
import type { InspectionHub } from '../ops/inspection-hub.ts';
import { opsRoutes } from '../ops/ops-routes.ts';
import type { SessionRegistry } from '../sessions/session-registry.ts';
import type { VoiceSessionFactory } from '../voice/voice-session.types.ts';

export interface HttpAppDeps {
  logger: Logger;
  pool: pg.Pool;
  /** Why the database can never answer this process again, or null (`Database.failure`). */
  databaseFailure: () => string | null;
  directory: SeniorDirectory;
  consents: PgConsentAdapter;
  memory: MemoryPort;
  erasure: SeniorErasure;
  semanticCache: SemanticCache;
  moodScores: PgMoodScoresRepository;
  /** A senior's mood alerts over the last 30 days (CaregiverAlerts.shown). */
  moodAlerts: (seniorId: string) => Promise<MoodAlert[]>;
  /** The admin listing of a senior's facts. */
  facts: PgMemoryFactsRepository;
  /** A senior's data export (RGPD access and portability). */
  exports: PgSeniorExportRepository;
  /** EXPORT_*: how many exports run and wait at once, and how long a client may stall one. */
  exportLimits: SeniorDataRoutesOptions['exportLimits'];
  profiles: PgProfilesRepository;
  registry: SessionRegistry;
  presence: PgPresenceRepository;
  inspection: InspectionHub;
  machine: typeof sessionMachine;
  metrics: Metrics;
  processId: string;
  presenceStaleMs: number;
  kioskHeartbeatMs: number;
  /** HTTP_REQUEST_TIMEOUT_MS: a request not whole by then gets 408 and its connection closes. */
  requestTimeoutMs: number;
  rateLimit?: { perSecond: number; burst: number } | undefined;
  /** Per-senior bounds on kiosk sockets and session starts. */
  seniorLimits?: SeniorLimitSettings | undefined;
  /** Voice mode of the kiosk socket. */
  voice?: VoiceSessionFactory;
  /** The region of the Mistral host in use, or `offline` without a key: said by `/ready`. */
  mistralRegion: string;
  /** The OpenAPI document and Swagger UI at `/docs` (off only where nothing reads them: a test runtime). */
  apiDocs: boolean;
}

/** Every route family as its own plugin: health, admin, mood, caregivers, ops, the console, the caregivers' page, the docs, the kiosk gateway. */
export async function buildHttpApp(deps: HttpAppDeps): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    forceCloseConnections: true,
    // Node enforces a request timeout only when the server is built with it (Fastify's own option is
    // set afterwards, and never fires), and checks it every connectionsCheckingInterval (30 s by default).
    requestTimeout: deps.requestTimeoutMs,
    http: { requestTimeout: deps.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, deps.requestTimeoutMs) },
  });
  // Answered before its body arrived (a 401 at the auth hook): node would go on reading the body,
  // and no request timeout counts once the answer is out, so a trickled body held the connection.
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete) reply.header('connection', 'close');
  });
  // Sessions end (and the kiosks hear why) before the sockets go.
  app.addHook('preClose', async () => deps.registry.shutdown());
  installHttpErrors(app);
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });
  // While shutting down, a kiosk is sent elsewhere before its upgrade: 503, try again shortly. Added
  // after the websocket plugin, whose own onRequest hook marks the upgrade so its socket is released.
  app.addHook('onRequest', async (request, reply) => {
    if (deps.registry.accepting || !request.url.startsWith('/v1/kiosk')) return;
    return reply.code(503).header('retry-after', '1').send({ error: 'shutting_down', message: 'this runtime is shutting down; reconnect' });
  });
  // Registered before any route, so that every route is documented.
  if (deps.apiDocs) await registerApiDocs(app);

  await app.register(healthRoutes, { pool: deps.pool, accepting: () => deps.registry.accepting, failure: deps.databaseFailure, mistralRegion: deps.mistralRegion });
  await app.register(seniorRoutes, {
    directory: deps.directory,
    consents: deps.consents,
    memory: deps.memory,
    erasure: deps.erasure,
    onConsentChange: (id) => deps.semanticCache.invalidateSenior(id),
  });
  await app.register(moodRoutes, { directory: deps.directory, moodScores: deps.moodScores, alerts: deps.moodAlerts });
  await app.register(seniorDataRoutes, { directory: deps.directory, facts: deps.facts, exports: deps.exports, exportLimits: deps.exportLimits });
  await app.register(caregiverRoutes, { directory: deps.directory });
  await app.register(profileRoutes, {
    directory: deps.directory,
    profiles: deps.profiles,
    onPersonaChange: (id) => (id ? deps.semanticCache.invalidateSenior(id) : deps.semanticCache.invalidateAll()),
  });
  await app.register(linkedSeniorsRoutes, { directory: deps.directory });
  await app.register(opsRoutes, {
    directory: deps.directory,
    registry: deps.registry,
    presence: deps.presence,
    inspection: deps.inspection,
    machine: deps.machine,
    metrics: deps.metrics.registry,
    processId: deps.processId,
    presenceStaleMs: deps.presenceStaleMs,
  });
  const consolePage = await readFile(new URL('../ops/console.html', import.meta.url), 'utf8');
  const consoleHeaders = pageHeaders(consolePage);
  app.get('/ops', { schema: { hide: true } }, async (_req, reply) => reply.headers(consoleHeaders).type('text/html; charset=utf-8').send(consolePage));
  await app.register(caregiverPage);
  const seniorForToken = (token: string) => deps.directory.seniorForKioskToken(token);
  await app.register(kioskPage, { seniorForToken });
  await app.register(kioskGateway, {
    registry: deps.registry,
    seniorForToken,
    heartbeatMs: deps.kioskHeartbeatMs,
    ...(deps.rateLimit ? { rateLimit: deps.rateLimit } : {}),
    ...(deps.seniorLimits ? { seniorLimits: deps.seniorLimits } : {}),
    ...(deps.voice ? { voice: deps.voice } : {}),
  });
  return app;
}

/** The OpenAPI document of every route registered after it, and Swagger UI at `/docs`. */
async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, { openapi: openApiDocument, transform: documentOperation });
  // Swagger UI's own CSP (hashes of its inline scripts), less its upgrade-insecure-requests: the
  // runtime is often reached over plain http on loopback, where that would break every asset.
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, transformStaticCSP: (csp) => csp.replace(/\s*upgrade-insecure-requests;?/, '') });
  app.addHook('onSend', async (request, reply) => {
    if (request.url === '/docs' || request.url.startsWith('/docs/')) reply.headers(BROWSER_HEADERS);
  });
}

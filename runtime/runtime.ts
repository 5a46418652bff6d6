import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { InspectionEvent } from 'xstate';
import { AgentFluxAdapter } from '../adapters/fluxes/agent-flux.adapter.ts';
import { loadCacheVariations, resolveIntent } from '../adapters/fluxes/cache-flux.adapter.ts';
import { MemoryFluxAdapter } from '../adapters/fluxes/memory-flux.adapter.ts';
import { MemorySearch } from '../adapters/memory/memory-search.ts';
import { provideMemory, type ProvidedMemory } from '../adapters/memory/memory-provider.ts';
import { createModels } from '../adapters/models/model-provider.ts';
import { PgCaregiverAlertsRepository } from '../adapters/postgres/pg-caregiver-alerts.repository.ts';
import { PgConsentAdapter } from '../adapters/postgres/pg-consent.adapter.ts';
import { PgDreamRepository } from '../adapters/postgres/pg-dream.repository.ts';
import { PgErasureNoticesRepository } from '../adapters/postgres/pg-erasure-notices.repository.ts';
import { PgErasurePurgeRepository } from '../adapters/postgres/pg-erasure-purge.repository.ts';
import { PgErasureRepository } from '../adapters/postgres/pg-erasure.repository.ts';
import { PgMemoryFactsRepository } from '../adapters/postgres/pg-memory-facts.repository.ts';
import { PgSeniorExportRepository } from '../adapters/postgres/pg-senior-export.repository.ts';
import { PgMoodScoresRepository } from '../adapters/postgres/pg-mood-scores.repository.ts';
import { PgPresenceRepository } from '../adapters/postgres/pg-presence.repository.ts';
import { PgSignals } from '../adapters/postgres/pg-signals.ts';
import { PgProfilesRepository } from '../adapters/postgres/pg-profiles.repository.ts';
import { MistralSmallConsolidator } from '../adapters/subagents/mistral-small-consolidator.ts';
import { tracedConsents, tracedMemory, tracedRecall, tracedSemanticCache } from '../adapters/telemetry/traced-ports.ts';
import { createTracing } from '../adapters/telemetry/tracing.ts';
import { TurnTraces } from '../adapters/telemetry/turn-traces.ts';
import { Dream } from './jobs/dream.ts';
import { DreamScheduler } from './jobs/dream-scheduler.ts';
import { readCalibrations, readStrictFigures, settingFor } from '../adapters/semantic-cache/semantic-cache-calibration.ts';
import { readRecallFloors, recallFloorFor } from '../adapters/memory/recall-floor.ts';
import { SemanticCache } from '../adapters/semantic-cache/semantic-cache.ts';
import { SeniorDirectory } from '../adapters/postgres/senior-directory.ts';
import { SharedQuestionEmbedder } from '../adapters/embedders/shared-question-embedder.ts';
import { MistralSmallConversationSummarizer } from '../adapters/subagents/mistral-small-conversation-summarizer.ts';
import { MistralSmallMemoryExtractor } from '../adapters/subagents/mistral-small-memory-extractor.ts';
import { MistralSmallCacheVerifier } from '../adapters/subagents/mistral-small-cache-verifier.ts';
import { MistralSmallMoodClassifier } from '../adapters/subagents/mistral-small-mood-classifier.ts';
import { MistralSmallSegmentSummarizer } from '../adapters/subagents/mistral-small-segment-summarizer.ts';
import { PgSegmentsRepository } from '../adapters/postgres/pg-segments.repository.ts';
import type { MemoryEmbedderPort } from '../machines/memory/memory.port.ts';
import { agentReplyLogic, recallLogic, semanticCacheLogic, windowSummaryLogic } from '../machines/session/session.actors.ts';
import { sessionMachine } from '../machines/session/session.machine.ts';
import { MistralSmallWindowSummarizer } from '../adapters/subagents/mistral-small-window-summarizer.ts';
import { CaregiverAlerts } from './jobs/caregiver-alerts.ts';
import { CloseJobs } from './jobs/close-jobs.ts';
import { SessionFacts } from './jobs/session-facts.ts';
import { ProviderGate } from '../adapters/models/provider-gate.ts';
import { ProviderPause } from '../adapters/mistral/retry-after.ts';
import { mistralHostOf, type MistralHost } from '../adapters/mistral/base-url.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { seedDevData, type DevSeed } from './db/dev-seed.ts';
import { devTokensFileFor, ForeignTokensFile, saveDevTokens } from './db/dev-tokens-file.ts';
import { ErasurePurge } from './jobs/erasure-purge.ts';
import { RemoteErasures, SeniorErasure, type ErasureAcrossProcesses, type InMemoryStores } from './sessions/erasure.ts';
import { Takeovers } from './sessions/takeover.ts';
import { buildHttpApp } from './http/app.ts';
import { createLogger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { migrate } from '../adapters/postgres/migrations.ts';
import { InspectionHub } from './ops/inspection-hub.ts';
import { setHeapGrowth } from './heap-growth.ts';
import { SessionRegistry } from './sessions/session-registry.ts';
import { PreemptiveTurns, SPECULATIONS_PER_UTTERANCE, type TurnPorts } from './voice/preemption/preemptive-turns.ts';
import { checkSpeechVoice, createMistralSpeaker, createVoiceServices } from './voice/voice-services.ts';
import { voiceSessionFactory } from './voice/voice-session.ts';
import { RECENT_SEGMENTS } from '../machines/memory/tiers.ts';

export interface RuntimeOverrides {
  logger?: Logger;
  /** Tests put AI SDK mocks here; otherwise Mistral or the offline model. */
  agentModel?: LanguageModelV4;
  /** The sub-agents' model (mood, summaries, extraction). */
  subagentModel?: LanguageModelV4;
  embedder?: MemoryEmbedderPort;
  rateLimit?: { perSecond: number; burst: number };
  /** Also handed every session actor's and turn-taking actor's raw inspection events (the Stately inspector). */
  inspect?: (event: InspectionEvent) => void;
  /**
   * A new embedded database (`memory://`, or a directory without a cluster yet) starts as a copy of
   * this migrated image (a test run makes it once: test/support/database-image.ts) instead of initdb
   * and every migration; migrate() still checks it. Ignored with DATABASE_URL.
   */
  databaseImage?: string;
  /** false: the nightly dream is neither scheduled nor worked by this process (pg-boss still runs the erasure purge and the caregiver alerts). Default true. */
  dreamScheduler?: boolean;
  /** false: no OpenAPI document and no Swagger UI (`/docs`). Default true. */
  apiDocs?: boolean;
}

export interface Runtime {
  app: FastifyInstance;
  db: Database;
  directory: SeniorDirectory;
  consents: PgConsentAdapter;
  memory: ProvidedMemory;
  embedder: MemoryEmbedderPort;
  metrics: Metrics;
  /** The turns' spans (the OpenTelemetry API's no-op tracer unless OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  traces: TurnTraces;
  /** True when spans are exported (OTLP/HTTP). */
  tracesExported: boolean;
  /**
   * Voice's warm-up: starts embedding an interim transcript (after the consent check recall would
   * make), so that a final transcript of the same text finds its embedding ready or in flight.
   * Fire and forget, errors swallowed, bounded.
   */
  prefetchTurn(seniorId: string, transcript: string): void;
  registry: SessionRegistry;
  closeJobs: CloseJobs;
  moodScores: PgMoodScoresRepository;
  semanticCache: SemanticCache;
  /** The semantic cache's state for the banner: its profile and threshold, or why it is off. */
  semanticCacheSetting: string;
  /** Recall's relevance floor for the banner: the similarity below which a fact is not recalled, or why there is none. */
  recallFloorSetting: string;
  presence: PgPresenceRepository;
  dream: Dream;
  dreams: DreamScheduler;
  inspection: InspectionHub;
  processId: string;
  logger: Logger;
  modelMode: 'mistral' | 'offline' | 'injected';
  /** The Mistral host in use and its region (base-url.ts); null without a key. */
  mistralHost: MistralHost | null;
  /** Voice mode's speech-to-text: Voxtral with a key; without one, voice sessions have no voice input. */
  voiceInput: boolean;
  seed: DevSeed | null;
  /** http://host:port of the listening server. */
  url: string;
  close(): Promise<void>;
}

/** What a graceful shutdown may take beyond draining the close-time jobs (HTTP, pg-boss, database). */
export const SHUTDOWN_MARGIN_MS = 4_000;
/**
 * The last spans' export at shutdown: it runs beside the drain, from the moment the live sessions
 * are closed (their turns' spans end then), and is given up after this long, within the margin.
 */
export const TRACE_FLUSH_MS = 2_000;
/**
 * Erasure notices are kept this many presence heartbeats: twice the silence after which a process
 * counts as dead, so every live process reads a notice at least once (its heartbeat reads them).
 */
const ERASURE_NOTICE_RETAIN_HEARTBEATS = 6;
/** Cached entries compared per lookup, most recent first. */
const SEMANTIC_CACHE_MAX_CANDIDATES = 512;
/**
 * The turn's question is embedded once, shared by recall and the semantic cache, and may be
 * warmed from voice's interim transcript (seconds before the final one): at most 10 s and 1,024
 * texts (~8 KiB of vector each) in RAM.
 */
const SHARED_EMBEDDINGS = { maxEntries: 1024, ttlMs: 10_000, warmTimeoutMs: 5_000, maxWarming: 64 };
/** Longer interim transcripts are not warmed (a turn's transcript is a spoken sentence or two). */
const PREFETCH_MAX_CHARS = 2_000;

export async function startRuntime(config: Config, overrides: RuntimeOverrides = {}): Promise<Runtime> {
  setHeapGrowth();
  const logger = overrides.logger ?? createLogger(config.LOG_LEVEL);
  // Voxtral's speaker first: its voice is checked beside the database's start, and an unknown one stops the start.
  const voxtral = await createMistralSpeaker(config, logger);
  const voiceChecked = voxtral ? checkSpeechVoice(voxtral, config, logger) : Promise.resolve();
  // Awaited once the database is up; a start that fails before then must not leave its rejection unhandled.
  voiceChecked.catch(() => {});
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    pgliteDataDir: config.PGLITE_DATA_DIR,
    pgliteSharedBuffersMb: config.PGLITE_SHARED_BUFFERS_MB,
    pgliteImage: overrides.databaseImage,
    onFatal: (err) => logger.fatal({ err }, 'the embedded database thread died: every query will fail'),
  });
  try {
    await migrate(db.pool);
    await voiceChecked;
  } catch (err) {
    await db.close();
    throw err;
  }
  const directory = new SeniorDirectory(db.pool);
  const consents = new PgConsentAdapter(db.pool);
  const seed =
    config.KOHAMI_ENV === 'production'
      ? null
      : await seedDevData(db.pool, { kioskToken: config.DEV_KIOSK_TOKEN, adminToken: config.DEV_ADMIN_TOKEN });
  // Kept at once, before anything else can fail: the tokens are stored hashed, so a start that seeds
  // and then fails (a busy port) would otherwise lose them for good.
  const tokensFile = devTokensFileFor(config);
  // A file there that is not ours is never written into: the banner still prints the tokens, once.
  if (seed && tokensFile) {
    await saveDevTokens(tokensFile, seed).catch((err: unknown) => {
      if (!(err instanceof ForeignTokensFile)) throw err;
      logger.warn(err.message);
    });
  }

  const models = createModels({ apiKey: config.MISTRAL_API_KEY, baseUrl: config.MISTRAL_BASE_URL, agentModelId: config.MISTRAL_AGENT_MODEL, subagentModelId: config.MISTRAL_SUBAGENT_MODEL, env: config.KOHAMI_ENV });
  const agentModel = overrides.agentModel ?? models.agent;
  const baseEmbedder = overrides.embedder ?? models.embedder;
  const verify = config.SEMANTIC_CACHE_VERIFY === 'model';
  const cacheSetting = settingFor(config.SEMANTIC_CACHE_PROFILE, baseEmbedder.modelId, readCalibrations(config.SEMANTIC_CACHE_CALIBRATION_FILE), readStrictFigures(), verify);
  const recallFloor = recallFloorFor(config.RECALL_MIN_SIMILARITY, baseEmbedder.modelId, readRecallFloors());
  // A turn's question is embedded by recall, then by the semantic cache when it is on.
  const embedder = new SharedQuestionEmbedder(baseEmbedder, { ...SHARED_EMBEDDINGS, maxUses: cacheSetting.threshold === null ? 1 : 2 });
  const metrics = createMetrics();
  const processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const tracing = await createTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: config.OTEL_SERVICE_NAME, instanceId: processId });
  const traces = new TurnTraces(tracing.tracer);
  if (tracing.exporting) logger.info({ serviceName: config.OTEL_SERVICE_NAME }, 'traces: each turn exported as spans over OTLP/HTTP');
  // Where the seniors' words go (INV-T02): said by the banner and /ready, and warned of when not the EU.
  const mistralHost = config.MISTRAL_API_KEY ? mistralHostOf(config.MISTRAL_BASE_URL, config.KOHAMI_ENV) : null;
  if (mistralHost?.region === 'Global' || mistralHost?.region === 'unconfirmed') logger.warn({ host: mistralHost.host, region: mistralHost.region }, `Mistral host: ${mistralHost.note}`);
  const memory = provideMemory({
    pool: db.pool,
    embedder,
    consents,
    zep: { baseUrl: config.ZEP_API_URL, apiKey: config.ZEP_API_KEY },
    duplicateDistance: config.FACT_DUPLICATE_DISTANCE,
    dualWriteCounter: metrics.dualWrite,
    logger,
    minSimilarity: recallFloor.floor,
  });

  // Every sub-agent call goes through the gate (the cache's model check, the live window's summaries, the
  // derivations, the dream): a 429 of their model pauses them all for its Retry-After.
  const gate = new ProviderGate();
  const subagentModel = gate.wrap(overrides.subagentModel ?? models.subagent);
  const semanticCache = new SemanticCache({
    strict: cacheSetting.strict,
    threshold: cacheSetting.threshold,
    verifier: verify ? { port: new MistralSmallCacheVerifier(subagentModel, 2 * config.SEMANTIC_CACHE_VERIFY_BUDGET_MS), budgetMs: config.SEMANTIC_CACHE_VERIFY_BUDGET_MS } : null,
    embedder,
    agentModelId: agentModel.modelId,
    ttlMs: config.SEMANTIC_CACHE_TTL_MS,
    maxPerSenior: config.SEMANTIC_CACHE_MAX_PER_SENIOR,
    maxEntries: config.SEMANTIC_CACHE_MAX_ENTRIES,
    maxCandidates: SEMANTIC_CACHE_MAX_CANDIDATES,
    budgetMs: config.RECALL_BUDGET_MS,
    metrics: { lookups: metrics.semanticCacheLookups, refusals: metrics.semanticCacheRefusals, bestSimilarity: metrics.semanticCacheSimilarity, verdicts: metrics.semanticCacheVerdicts },
    logger,
  });
  metrics.sources.semanticCacheEntries = () => semanticCache.size;

  // A 429 of the agent's model pauses the agent for every session: each one checks it before its call.
  const agentPause = new ProviderPause();
  const turnPorts: TurnPorts = {
    // Recall's consent query and memory search are spans of the turn's recall.
    recall: new MemoryFluxAdapter(tracedConsents(consents, traces), tracedMemory(memory.memory, traces), config.RECALL_BUDGET_MS, logger),
    cache: semanticCache,
    agent: new AgentFluxAdapter(agentModel, new MemorySearch(db.pool, consents, memory.memory, embedder), traces, agentPause),
  };
  // Voice's preemptive turn runs a shadow of the session machine on recording ports; the live
  // sessions' ports adopt what it recorded when the turn asks the same.
  const preemptiveTurns =
    config.PREEMPTIVE_TURN === 'on'
      ? new PreemptiveTurns(
          turnPorts,
          { ended: (outcome) => metrics.preemptiveTurns.inc({ outcome }), wasted: (kind) => metrics.preemptiveWasted.inc({ kind }) },
          { leadMs: config.PREEMPTIVE_LEAD_MS, maxPerUtterance: SPECULATIONS_PER_UTTERANCE, answersAtOnce: (transcript) => resolveIntent(transcript) !== null },
        )
      : null;
  const ports = preemptiveTurns?.adoptingPorts() ?? turnPorts;
  const machine = sessionMachine.provide({
    actors: {
      agentReply: agentReplyLogic(ports.agent),
      // The stages as the turn sees them: a preemptive turn's adopted work shows as its wait here.
      semanticCache: semanticCacheLogic(tracedSemanticCache(ports.cache, traces)),
      summarizeWindow: windowSummaryLogic(new MistralSmallWindowSummarizer(subagentModel)),
      recall: recallLogic(tracedRecall(ports.recall, traces)),
    },
  });
  const segments = new PgSegmentsRepository(db.pool);
  const profiles = new PgProfilesRepository(db.pool);
  const presence = new PgPresenceRepository(db.pool);
  const presenceStaleMs = config.PRESENCE_HEARTBEAT_MS * 3;
  // Before the first session: a takeover by another process is heard from the start.
  const signals = new PgSignals(db.pool, processId, logger);
  await signals.start();
  const takeovers = new Takeovers(signals, processId, config.TAKEOVER_ACK_MS, logger);
  const variations = loadCacheVariations();
  const inspection = new InspectionHub();
  inspection.forward = overrides.inspect ?? null;
  const registry = new SessionRegistry({
    presence,
    processId,
    presenceStaleMs,
    takeovers,
    shutdownTurnGraceMs: config.SHUTDOWN_TURN_GRACE_MS,
    inspect: inspection.observe,
    traces,
    machine,
    variations,
    // Two rounds of independent reads rather than five in a row: a start waits on the database for
    // two round trips, not five (the queries are the same).
    loadProfile: async (id) => {
      const [profile, persona, consented] = await Promise.all([directory.profile(id), profiles.persona(id), consents.hasConsent(id, 'conversation')]);
      if (!profile) return null;
      // Segments, compass and interlocutor are derived from conversations: only while the consent holds (INV-C01).
      if (!consented) return { ...profile, persona };
      const [{ compass, interlocutor, pauses }, recentSegments] = await Promise.all([profiles.profile(id), segments.recent(id, RECENT_SEGMENTS)]);
      return { ...profile, persona, compass, interlocutor, pauses, recentSegments };
    },
    timing: {
      turnBudgetMs: config.TURN_BUDGET_MS,
      sessionPauseMs: config.SESSION_PAUSE_MS,
      kioskGraceMs: config.KIOSK_GRACE_MS,
      agentStallMs: config.AGENT_STALL_MS,
      replyMaxMs: config.REPLY_MAX_MS,
    },
    windowBudget: { maxMessages: config.WINDOW_MAX_MESSAGES, maxTokens: config.WINDOW_MAX_TOKENS },
    agentPause,
    logger,
  });
  const moodScores = new PgMoodScoresRepository(db.pool);
  const memoryFacts = new PgMemoryFactsRepository(db.pool);
  const closeJobs = new CloseJobs({
    consents,
    classifier: new MistralSmallMoodClassifier(subagentModel),
    summarizer: new MistralSmallConversationSummarizer(subagentModel, logger),
    facts: new SessionFacts({ extractor: new MistralSmallMemoryExtractor(subagentModel, logger), facts: memoryFacts, memory: memory.memory, logger }),
    segmentSummarizer: new MistralSmallSegmentSummarizer(subagentModel, logger),
    moodScores,
    segments,
    metrics,
    logger,
    gate,
    concurrency: config.CLOSE_JOBS_CONCURRENCY,
    maxAttempts: config.CLOSE_JOBS_MAX_ATTEMPTS,
    maxTranscripts: config.CLOSE_JOBS_MAX_TRANSCRIPTS,
    maxHeldBytes: config.CLOSE_JOBS_MAX_HELD_MB * 1024 * 1024,
  });
  metrics.sources.derivations = () => closeJobs.stats();
  registry.onSessionClosed((event) => closeJobs.handle(event));
  registry.onTurn((done, session) => {
    // The turn's derivation, once this reply.done has gone to the kiosk and the actor's transition is over: never on the reply's path.
    setImmediate(() => closeJobs.handleTurn(session, done.turnId));
    metrics.turns.inc({ flux: done.flux });
    metrics.turnLatency.observe({ flux: done.flux }, done.latencyMs / 1000);
    if (done.flux === 'cache') metrics.cacheFluxHits.inc();
    if (done.flux === 'sos') metrics.sosFallbacks.inc({ reason: done.sosReason ?? 'unknown' });
    // The machine gives a ticket to a completed agent reply only (never SOS, neutral, interrupted, failed or tool-using ones).
    if (done.cacheTicket) semanticCache.store(done.cacheTicket, done.text);
  });
  metrics.sources.liveSessions = () => registry.size;
  takeovers.serve(registry);
  const beat = () => registry.heartbeat(presenceStaleMs).catch((err: unknown) => logger.warn({ err }, 'presence heartbeat failed'));
  const presenceTimer = setInterval(beat, config.PRESENCE_HEARTBEAT_MS);
  presenceTimer.unref();

  const dreamStore = new PgDreamRepository(db.pool);
  const dream = new Dream({
    store: dreamStore,
    moodScores,
    segments,
    facts: memoryFacts,
    consents,
    memory: memory.memory,
    embedder,
    profiles,
    consolidator: new MistralSmallConsolidator(subagentModel),
  });
  const dreams = new DreamScheduler(db.pool, dreamStore, dream, logger, {
    expireSeconds: config.DREAM_JOB_EXPIRE_S,
    retryDelaySeconds: config.DREAM_JOB_RETRY_DELAY_S,
    maintenanceSeconds: config.DREAM_JOB_MAINTENANCE_S,
  });
  await dreams.start({ nightly: overrides.dreamScheduler ?? true });
  const erasurePurge = new ErasurePurge(dreams.boss, new PgErasurePurgeRepository(db.pool), config.ERASURE_PURGE_DELAY_S, logger);
  await erasurePurge.start();
  const caregiverAlerts = new CaregiverAlerts({
    boss: dreams.boss,
    store: new PgCaregiverAlertsRepository(db.pool),
    moodScores,
    activeSeniors: () => dreamStore.seniorsActiveInLastWeek(),
    settings: { streakDays: config.CAREGIVER_ALERT_STREAK_DAYS, weeklyDrop: config.CAREGIVER_ALERT_WEEKLY_DROP },
    webhook: config.CAREGIVER_ALERT_WEBHOOK_URL
      ? { url: config.CAREGIVER_ALERT_WEBHOOK_URL, secret: config.CAREGIVER_ALERT_WEBHOOK_SECRET!, retryDelaySeconds: config.CAREGIVER_ALERT_RETRY_DELAY_S }
      : null,
    logger,
  });
  await caregiverAlerts.start();
  closeJobs.onMoodWritten((seniorId) => {
    caregiverAlerts.request(seniorId).catch((err: unknown) => logger.warn({ err, seniorId }, 'caregiver alerts: the evaluation could not be queued'));
  });

  const prefetchTurn = (seniorId: string, transcript: string): void => {
    if (transcript.length === 0 || transcript.length > PREFETCH_MAX_CHARS) return;
    // Nothing leaves for the embedder before the consent recall itself checks first (INV-C01).
    consents.hasConsent(seniorId, 'conversation').then(
      (consented) => {
        if (consented) embedder.warm(transcript);
      },
      () => {},
    );
  };
  const voiceServices = await createVoiceServices(config, {
    pool: db.pool,
    consents,
    variations,
    metrics,
    logger,
    prefetchTurn,
    turns: { start: (session, turnId, transcript, voice, opened) => registry.turn(session, turnId, transcript, voice, opened), traces },
    ...(preemptiveTurns ? { preemptiveTurns } : {}),
    ...(voxtral ? { voxtral } : {}),
    ...(overrides.inspect ? { inspect: overrides.inspect } : {}),
  });
  // What erasure empties in RAM, here and, told through the database, in every other process sharing it.
  // `derivations`: the senior's pending mood, fact and segment jobs (their transcripts are in RAM only).
  const inMemory: InMemoryStores = { semantic_cache: semanticCache, voice_lines: voiceServices, derivations: closeJobs };
  const across: ErasureAcrossProcesses = {
    notices: new PgErasureNoticesRepository(db.pool),
    presence,
    signals,
    processId,
    staleMs: presenceStaleMs,
    pollMs: config.ERASURE_POLL_MS,
    retainMs: ERASURE_NOTICE_RETAIN_HEARTBEATS * config.PRESENCE_HEARTBEAT_MS,
    logger,
  };
  const remoteErasures = new RemoteErasures(across, registry, inMemory);
  registry.onBeat(() => remoteErasures.heartbeat());
  signals.on((signal) => {
    if (signal.kind === 'erasure') remoteErasures.wake();
  });
  // A first beat at once: the other processes know this one (and this one them) from the start, not a heartbeat later.
  await beat();
  const app = await buildHttpApp({
    logger,
    pool: db.pool,
    databaseFailure: () => db.failure(),
    directory,
    consents,
    memory: memory.memory,
    erasure: new SeniorErasure(new PgErasureRepository(db.pool), memory.stores, registry, inMemory, across, erasurePurge),
    semanticCache,
    moodScores,
    moodAlerts: (seniorId) => caregiverAlerts.shown(seniorId),
    facts: memoryFacts,
    exports: new PgSeniorExportRepository(db.pool),
    exportLimits: {
      concurrency: config.EXPORT_CONCURRENCY,
      queue: config.EXPORT_QUEUE,
      waitMs: config.EXPORT_QUEUE_WAIT_MS,
      stallMs: config.EXPORT_STALL_MS,
    },
    profiles,
    registry,
    presence,
    inspection,
    machine,
    metrics,
    processId,
    presenceStaleMs,
    kioskHeartbeatMs: config.KIOSK_HEARTBEAT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    rateLimit: overrides.rateLimit,
    seniorLimits: { socketsPerSenior: config.KIOSK_SOCKETS_PER_SENIOR, startsBurst: config.KIOSK_STARTS_BURST, startsPerMinute: config.KIOSK_STARTS_PER_MINUTE },
    voice: voiceSessionFactory(voiceServices),
    mistralRegion: mistralHost?.region ?? 'offline',
    apiDocs: overrides.apiDocs ?? true,
  });

  await app.listen({ port: config.PORT, host: config.HOST });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;

  // Shutdown order: refuse new sessions (and /ready turns 503) at once, close the live ones so
  // their derivations are queued, drain those while HTTP still answers probes and scrapes, then
  // close the sockets, pg-boss and the database.
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      clearInterval(presenceTimer);
      remoteErasures.stop();
      const began = performance.now();
      const answered = await registry.shutdown();
      // The turns answered at shutdown count against the same budget: the exit bound stays SHUTDOWN_DRAIN_MS + margin.
      const drainMs = answered > 0 ? Math.max(0, Math.floor(config.SHUTDOWN_DRAIN_MS - (performance.now() - began))) : config.SHUTDOWN_DRAIN_MS;
      // After the last turns' spans have ended.
      const tracesFlushed = tracing.shutdown(TRACE_FLUSH_MS);
      await presence.releaseProcess(processId).catch(() => {});
      await signals.stop();
      await closeJobs.shutdown(drainMs, config.SHUTDOWN_DRAIN_CONCURRENCY);
      await app.close();
      await dreams.stop().catch((err: unknown) => logger.warn({ err }, 'pg-boss did not stop cleanly'));
      // The closed voice sessions' pause profiles are written before the database goes.
      await voiceServices.pausesSettled?.();
      await tracesFlushed;
      await db.close();
    })());

  const modelMode = overrides.agentModel ? 'injected' : models.mode;
  const semanticCacheSetting = semanticCache.enabled ? cacheSetting.reason : `off — ${cacheSetting.reason}`;
  const voiceInput = voiceServices.transcriber !== null;
  return { app, db, directory, consents, memory, embedder, metrics, traces, tracesExported: tracing.exporting, prefetchTurn, registry, closeJobs, moodScores, semanticCache, semanticCacheSetting, recallFloorSetting: recallFloor.reason, presence, dream, dreams, inspection, processId, logger, modelMode, mistralHost, voiceInput, seed, url, close };
}

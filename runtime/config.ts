import { z } from 'zod';
import { assertMistralBaseUrl, KOHAMI_ENVS, type KohamiEnv } from '../adapters/mistral/base-url.ts';
import { PGLITE_SHARED_BUFFERS_MB } from './db/pglite-thread.ts';
import { flushAnswerMsFor } from '../adapters/voice/transcription-settings.ts';
import { PICO_LINGWARE_DIR } from '../adapters/voice/pico-lingware.ts';
import { AGENT_CALL_MIN_MS } from '../machines/session/session.types.ts';

const kohamiEnv = z.enum(KOHAMI_ENVS);

/** RECALL_BUDGET_MS unset: min(400, TURN_BUDGET_MS / 3), leaving the agent most of the turn. */
const recallBudgetMs = (cfg: { RECALL_BUDGET_MS?: number | undefined; TURN_BUDGET_MS: number }) => cfg.RECALL_BUDGET_MS ?? Math.min(400, Math.floor(cfg.TURN_BUDGET_MS / 3));

/**
 * A deployment that forgets KOHAMI_ENV must not seed a demo senior and print an admin token to
 * whoever can reach it: unset, it is development only while the runtime listens on loopback.
 */
function kohamiEnvOf(cfg: { KOHAMI_ENV?: KohamiEnv | undefined; HOST: string }): KohamiEnv {
  if (cfg.KOHAMI_ENV) return cfg.KOHAMI_ENV;
  return /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(cfg.HOST) ? 'development' : 'production';
}

const positiveMs = z.coerce.number().int().positive();
/** A caregiver alert webhook's secret: 32 characters at least (128 bits as hex, more as base64). */
const WEBHOOK_SECRET_MIN = 32;
const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const schema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    /** Unset: development on a loopback HOST, production otherwise (see kohamiEnvOf). */
    KOHAMI_ENV: kohamiEnv.optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DATABASE_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    PGLITE_DATA_DIR: z.string().min(1).default('.data/pglite'),
    /** Embedded PGlite's shared_buffers, resident in this process once touched (pglite-thread.ts). */
    PGLITE_SHARED_BUFFERS_MB: z.coerce.number().int().min(1).max(1024).default(PGLITE_SHARED_BUFFERS_MB),
    MISTRAL_API_KEY: optionalText,
    /** The SDK's EU server by default: INV-T02, the seniors' words are processed in the EU (base-url.ts). */
    MISTRAL_BASE_URL: z.url().default('https://api.eu.mistral.ai/v1'),
    MISTRAL_AGENT_MODEL: z.string().min(1).default('mistral-small-2603'),
    MISTRAL_SUBAGENT_MODEL: z.string().min(1).default('mistral-small-2603'),
    /** Derivation jobs (per-turn mood, close-time facts and segment) running at once: size it for the provider's rate limit. */
    CLOSE_JOBS_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
    /** Tries per stage of a derivation (model, then database) before a transient failure is final. */
    CLOSE_JOBS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(4),
    /** Turns (transcript and reply) pending derivations may hold in RAM; past it, new jobs are dropped and counted. */
    CLOSE_JOBS_MAX_TRANSCRIPTS: z.coerce.number().int().min(1).max(1_000_000).default(20_000),
    /** The same bound in MiB of their text. */
    CLOSE_JOBS_MAX_HELD_MB: z.coerce.number().int().min(1).max(4096).default(48),
    /**
     * Cosine distance at or under which a new fact (that the near-miss guard also finds the same) is a
     * copy of a fact already held. Unset: the embedding model's calibrated value (docs/memory.md).
     */
    FACT_DUPLICATE_DISTANCE: optionalText.pipe(z.coerce.number<string | undefined>({ message: 'must be a number from 0 to 1' }).min(0).max(1).optional()),
    ZEP_API_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    ZEP_API_KEY: optionalText,
    TURN_BUDGET_MS: positiveMs.default(2500),
    /** Longest gap between two chunks of a reply being spoken; then the turn ends as heard. */
    AGENT_STALL_MS: positiveMs.default(1500),
    /** Longest a whole reply may take; then the turn ends as heard. */
    REPLY_MAX_MS: positiveMs.default(15_000),
    /** On SIGTERM, how long the close-time derivations may take to finish (fits a 30 s grace period). */
    SHUTDOWN_DRAIN_MS: positiveMs.default(25_000),
    /** At shutdown, how long a turn in flight may take to be answered before its session closes (0: SOS at once). */
    SHUTDOWN_TURN_GRACE_MS: z.coerce.number().int().min(0).max(30_000).default(3_000),
    /** The close-time pool's concurrency while draining at shutdown. */
    SHUTDOWN_DRAIN_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(64),
    /** Default: min(400, TURN_BUDGET_MS / 3), leaving the agent most of the turn. */
    RECALL_BUDGET_MS: positiveMs.optional(),
    /**
     * Recall's relevance floor: `calibrated` (the embedding model's, from recall:calibrate), `off`, or a
     * cosine similarity that overrides it (only meaningful for the one embedding model it was read on).
     */
    RECALL_MIN_SIMILARITY: z
      .string()
      .trim()
      .default('calibrated')
      .transform((v) => v || 'calibrated')
      .pipe(z.union([z.enum(['calibrated', 'off']), z.coerce.number<string>().min(-1).max(1)], { error: 'expected calibrated, off, or a cosine similarity between -1 and 1' })),
    SESSION_PAUSE_MS: positiveMs.default(3_600_000),
    KIOSK_GRACE_MS: positiveMs.default(30_000),
    KIOSK_HEARTBEAT_MS: positiveMs.default(15_000),
    /** The longest an HTTP request may take to arrive whole (a body trickled byte by byte is cut). */
    HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** Senior data exports streamed at once; each competes with the kiosks' turns for the database. */
    EXPORT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    /** Exports waiting for their turn; one more is refused with 503 and Retry-After. */
    EXPORT_QUEUE: z.coerce.number().int().min(0).max(1000).default(4),
    /** The longest an export waits for its turn before it is refused with 503. */
    EXPORT_QUEUE_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** The longest an export's client may leave written bytes unread; then its connection is closed. */
    EXPORT_STALL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** Kiosk sockets open at once per senior (a kiosk token binds one senior); more are refused with 429. */
    KIOSK_SOCKETS_PER_SENIOR: z.coerce.number().int().min(1).max(10_000).default(32),
    /** `session.start` frames a senior's kiosks may send at once (then KIOSK_STARTS_PER_MINUTE). */
    KIOSK_STARTS_BURST: z.coerce.number().int().min(1).max(10_000).default(20),
    /** `session.start` frames per minute per senior after the burst; more get `start_rate_limited`. */
    KIOSK_STARTS_PER_MINUTE: z.coerce.number().int().min(1).max(60_000).default(60),
    PRESENCE_HEARTBEAT_MS: positiveMs.default(5_000),
    /** A nightly consolidation job still active after this many seconds (its process died) is retried by a live process. */
    DREAM_JOB_EXPIRE_S: z.coerce.number().int().min(1).max(86_400).default(300),
    /** The first retry's delay of a failed or expired consolidation job (backed off from there). */
    DREAM_JOB_RETRY_DELAY_S: z.coerce.number().int().min(0).max(86_400).default(60),
    /** How often the processes look for expired jobs (one of them at a time). */
    DREAM_JOB_MAINTENANCE_S: z.coerce.number().int().min(1).max(3_600).default(60),
    /**
     * A takeover of a senior whose session lives in another live process: how long the new session
     * waits for that process to say its session is closed (LISTEN/NOTIFY) before it answers anyway.
     */
    TAKEOVER_ACK_MS: z.coerce.number().int().min(50).max(10_000).default(500),
    /**
     * While another runtime process shares the database: how often this one looks for erasures made
     * through the others (their sessions of the senior close as `erased`, their caches are purged).
     */
    ERASURE_POLL_MS: z.coerce.number().int().min(20).max(1000).default(250),
    /**
     * After an erasure, the purge that makes the deleted rows unreadable on disk (VACUUM FULL of the
     * senior tables, a WAL switch and a CHECKPOINT) runs this long later; erasures meanwhile share it.
     */
    ERASURE_PURGE_DELAY_S: z.coerce.number().int().min(0).max(86_400).default(60),
    /** Caregiver alerts: this many days with a score in a row whose dominant tier is `preoccupant` make an episode; 0: off. */
    CAREGIVER_ALERT_STREAK_DAYS: z.coerce.number().int().min(0).max(30).default(3),
    /** Caregiver alerts: the last 7 days' average this many points below the 7 days before makes an episode; 0: off. */
    CAREGIVER_ALERT_WEEKLY_DROP: z.coerce.number().min(0).max(100).default(15),
    /** Caregiver alerts: where each new episode is POSTed, signed (docs/operations.md); unset, nothing is posted. */
    CAREGIVER_ALERT_WEBHOOK_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    /** The webhook's HMAC-SHA256 key, shared with its receiver: required with the URL. */
    CAREGIVER_ALERT_WEBHOOK_SECRET: optionalText.pipe(z.string().min(WEBHOOK_SECRET_MIN, `must be at least ${WEBHOOK_SECRET_MIN} characters (e.g. openssl rand -hex 32)`).optional()),
    /** The first retry's delay of a failed webhook; pg-boss backs off from it (doubling, jittered). */
    CAREGIVER_ALERT_RETRY_DELAY_S: z.coerce.number().int().min(0).max(3600).default(30),
    WINDOW_MAX_MESSAGES: z.coerce.number().int().min(13).max(500).default(24),
    WINDOW_MAX_TOKENS: z.coerce.number().int().min(200).max(100_000).default(3000),
    SEMANTIC_CACHE_PROFILE: z.enum(['strict', 'permissive', 'aggressive', 'off']).default('strict'),
    /** The calibrations by embedding model (npm run cache:calibrate writes it). Unset: the shipped file. */
    SEMANTIC_CACHE_CALIBRATION_FILE: z.string().min(1).optional(),
    SEMANTIC_CACHE_TTL_MS: positiveMs.default(6 * 3_600_000),
    SEMANTIC_CACHE_MAX_PER_SENIOR: z.coerce.number().int().min(1).max(10_000).default(200),
    SEMANTIC_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(1_000_000).default(20_000),
    /** `model`: a question similar to an answered one, not the same by its words, is served only when the sub-agent model confirms it. */
    SEMANTIC_CACHE_VERIFY: z.enum(['off', 'model']).default('off'),
    /** The model check's bound; past it, a miss (the agent answers). */
    SEMANTIC_CACHE_VERIFY_BUDGET_MS: positiveMs.default(1000),
    /** Voice mode: the wait after a sentence the recognizer closed (« . », « ? », « ! ») or a question by its form. */
    ENDPOINT_MIN_MS: z.coerce.number().int().min(100).max(3000).default(400),
    /**
     * Voice mode: silence that ends an utterance when its ending tells nothing. Seniors pause 1–2 s to find
     * a word; a sentence the recognizer closed ends at ENDPOINT_MIN_MS instead, so this wait is long.
     */
    ENDPOINT_SILENCE_MS: z.coerce.number().int().min(300).max(3000).default(2200),
    /** Voice mode: the wait after an unfinished ending (« et », « de », « le », « je suis », « euh », a comma …). */
    ENDPOINT_UNFINISHED_MS: z.coerce.number().int().min(300).max(10_000).default(2500),
    /** Voice mode: no silence inside an utterance lasts longer; an abandoned sentence is answered then. */
    ENDPOINT_MAX_MS: z.coerce.number().int().min(300).max(10_000).default(3000),
    /**
     * Voice mode, the preemptive turn: while a pause's end-of-turn wait runs, the turn's work (recall,
     * the semantic cache, the model, the first sentence's speech) starts on the interim transcript and is
     * used if the turn ends on that very text, dropped otherwise. `off` saves the calls wasted on pauses
     * the senior goes on after.
     */
    PREEMPTIVE_TURN: z.enum(['on', 'off']).default('on'),
    /** Voice mode: the preemptive turn starts when the end of the pause is due within this much silence. */
    PREEMPTIVE_LEAD_MS: z.coerce.number().int().min(0).max(10_000).default(600),
    /**
     * Voice mode: how far behind the audio Voxtral realtime gives its words (`target_streaming_delay_ms`,
     * 80–1200). Shorter: the end of a sentence is read sooner (a faster answer), a little less accurately.
     * Unset: the service's own (480 ms), and nothing is sent.
     */
    STT_STREAMING_DELAY_MS: optionalText.pipe(z.coerce.number<string | undefined>({ message: 'must be a whole number of ms from 80 to 1200' }).int().min(80).max(1200).optional()),
    /**
     * Voice mode: this far into a pause the recognizer is asked for its final text of what was said so
     * far (the stream stays open; if the senior goes on, the rest joins it), so the end-of-turn decision
     * reads the sentence's real ending instead of words half a second behind. 0: off (the text is read
     * only at the end of turn).
     */
    STT_EARLY_FLUSH_MS: z.coerce.number().int().min(0).max(3000).default(150),
    /**
     * Voice mode: when the text flushed early does not close the sentence, it is asked for again this far
     * into the same pause, with the pause's audio since the flush (a soft word ending the detector did
     * not count as speech may lie past it) — or as soon as the first flush is answered, if that is later.
     * Past the pause's end of turn it never comes. 0: off.
     */
    STT_RECHECK_MS: z.coerce.number().int().min(0).max(3000).default(400),
    /** Voice mode: shorter bursts of sound are not speech. */
    MIN_SPEECH_MS: z.coerce.number().int().min(50).max(2000).default(250),
    /** Voice mode: an utterance is cut (and transcribed) at this length. */
    MAX_UTTERANCE_MS: z.coerce.number().int().min(2000).max(120_000).default(30_000),
    /** Voice mode: end of speech → final transcript; later (or a failure), the SOS line is spoken. */
    STT_BUDGET_MS: positiveMs.default(2000),
    /**
     * Voice mode: a flush the recognizer has not answered this long ends its socket (`input_audio.end`, whose
     * answer brings the text); as long again, and the utterance is replayed on a fresh socket. Below half of
     * STT_BUDGET_MS. Unset: min(600, STT_BUDGET_MS / 3).
     */
    STT_FLUSH_ANSWER_MS: positiveMs.optional(),
    /** Voice mode: a transcription socket that carried no audio this long is closed (the service ends idle ones at 30 s); the next speech opens another. */
    /** `end`: every utterance ends its transcription socket rather than flushing it (`flush` switches to it on the first flush left unanswered). */
    STT_FLUSH_MODE: z.enum(['flush', 'end']).default('flush'),
    STT_IDLE_CLOSE_MS: z.coerce.number().int().min(1000).max(600_000).default(20_000),
    /** Voice mode: sent as `language` in the recognizer's set-up, a field its API does not document (`mistral:check` says if it is taken). Unset: not sent. */
    STT_LANGUAGE: optionalText.pipe(z.string().regex(/^[a-z]{2,3}$/, 'must be a language code such as fr').optional()),
    /** Voice mode: the senior's names sent as `context_bias` in the recognizer's set-up, a field its API does not document. */
    STT_CONTEXT_BIAS: z.enum(['on', 'off']).default('off'),
    /** Voice mode: speech over the reply audio at least this long (and not a backchannel) interrupts it. */
    BARGE_IN_MIN_MS: z.coerce.number().int().min(100).max(5000).default(400),
    /** Voice mode: speech over the reply with no word this long after it started pauses the reply, which resumes if none come. */
    FALSE_INTERRUPTION_MS: z.coerce.number().int().min(300).max(10_000).default(1500),
    /** Voice mode: after a reply has played, this much silence brings one gentle check-in line; 0 (the default) is off. */
    IDLE_CHECKIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(0),
    /** Voice mode, Opus reply audio: libopus's encoder effort, 0–10 (CPU against quality; bench:opus). */
    OPUS_COMPLEXITY: z.coerce.number().int().min(0).max(10).default(3),
    /** The offline voice (replies without MISTRAL_API_KEY, the fallback after Voxtral's speech fails): auto takes SVOX Pico when its lingware is installed. */
    OFFLINE_VOICE: z.enum(['auto', 'pico', 'espeak']).default('auto'),
    /** Where SVOX Pico's French lingware is (Debian's libttspico-data). */
    PICO_LINGWARE_DIR: z.string().min(1).default(PICO_LINGWARE_DIR),
    MISTRAL_STT_MODEL: z.string().min(1).default('voxtral-mini-transcribe-realtime-2602'),
    MISTRAL_TTS_MODEL: z.string().min(1).default('voxtral-mini-tts-2603'),
    MISTRAL_TTS_VOICE: z.string().min(1).default('fr_marie_neutral'),
    /** OpenTelemetry: the collector's OTLP/HTTP base URL; unset, no span is recorded or sent. */
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    OTEL_SERVICE_NAME: z.string().trim().min(1).default('kohami-runtime'),
    DEV_KIOSK_TOKEN: optionalText.pipe(z.string().min(16).optional()),
    DEV_ADMIN_TOKEN: optionalText.pipe(z.string().min(16).optional()),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.RECALL_BUDGET_MS !== undefined && cfg.TURN_BUDGET_MS > 0 && cfg.RECALL_BUDGET_MS >= cfg.TURN_BUDGET_MS) {
      ctx.addIssue({ code: 'custom', path: ['RECALL_BUDGET_MS'], message: `must be below TURN_BUDGET_MS (${cfg.TURN_BUDGET_MS})` });
    }
    if (cfg.SEMANTIC_CACHE_VERIFY === 'model' && !cfg.MISTRAL_API_KEY) {
      ctx.addIssue({ code: 'custom', path: ['SEMANTIC_CACHE_VERIFY'], message: 'model needs MISTRAL_API_KEY: the check is a call to the sub-agent model' });
    }
    // The check runs after recall's wait, before the agent's call: both inside the turn's budget, with the agent's least after them.
    const recallMs = recallBudgetMs(cfg);
    if (cfg.SEMANTIC_CACHE_VERIFY === 'model' && recallMs + cfg.SEMANTIC_CACHE_VERIFY_BUDGET_MS + AGENT_CALL_MIN_MS > cfg.TURN_BUDGET_MS) {
      ctx.addIssue({ code: 'custom', path: ['SEMANTIC_CACHE_VERIFY_BUDGET_MS'], message: `with RECALL_BUDGET_MS (${recallMs}) must leave the agent's call ${AGENT_CALL_MIN_MS} ms of TURN_BUDGET_MS (${cfg.TURN_BUDGET_MS})` });
    }
    if (cfg.REPLY_MAX_MS <= cfg.TURN_BUDGET_MS) {
      ctx.addIssue({ code: 'custom', path: ['REPLY_MAX_MS'], message: `must be above TURN_BUDGET_MS (${cfg.TURN_BUDGET_MS})` });
    }
    if (cfg.AGENT_STALL_MS >= cfg.REPLY_MAX_MS) {
      ctx.addIssue({ code: 'custom', path: ['AGENT_STALL_MS'], message: `must be below REPLY_MAX_MS (${cfg.REPLY_MAX_MS})` });
    }
    // The listener refuses this pair per voice session; refused here, it cannot silently turn voice input off.
    if (cfg.MIN_SPEECH_MS >= cfg.MAX_UTTERANCE_MS) {
      ctx.addIssue({ code: 'custom', path: ['MIN_SPEECH_MS'], message: `must be below MAX_UTTERANCE_MS (${cfg.MAX_UTTERANCE_MS})` });
    }
    // The end-of-turn waits, shortest to longest (machines/voice/end-of-turn.ts refuses any other order).
    if (cfg.ENDPOINT_MIN_MS >= cfg.ENDPOINT_SILENCE_MS) {
      ctx.addIssue({ code: 'custom', path: ['ENDPOINT_MIN_MS'], message: `must be below ENDPOINT_SILENCE_MS (${cfg.ENDPOINT_SILENCE_MS})` });
    }
    if (cfg.ENDPOINT_UNFINISHED_MS <= cfg.ENDPOINT_SILENCE_MS) {
      ctx.addIssue({ code: 'custom', path: ['ENDPOINT_UNFINISHED_MS'], message: `must be above ENDPOINT_SILENCE_MS (${cfg.ENDPOINT_SILENCE_MS})` });
    }
    if (cfg.STT_EARLY_FLUSH_MS >= cfg.ENDPOINT_MIN_MS) {
      ctx.addIssue({ code: 'custom', path: ['STT_EARLY_FLUSH_MS'], message: `must be below ENDPOINT_MIN_MS (${cfg.ENDPOINT_MIN_MS}), or 0 for off` });
    }
    if (cfg.STT_FLUSH_ANSWER_MS !== undefined && 2 * cfg.STT_FLUSH_ANSWER_MS >= cfg.STT_BUDGET_MS) {
      ctx.addIssue({ code: 'custom', path: ['STT_FLUSH_ANSWER_MS'], message: `must be below half of STT_BUDGET_MS (${cfg.STT_BUDGET_MS})` });
    }
    if (cfg.ENDPOINT_MAX_MS < cfg.ENDPOINT_UNFINISHED_MS) {
      ctx.addIssue({ code: 'custom', path: ['ENDPOINT_MAX_MS'], message: `must be at least ENDPOINT_UNFINISHED_MS (${cfg.ENDPOINT_UNFINISHED_MS})` });
    }
    if (Boolean(cfg.ZEP_API_URL) !== Boolean(cfg.ZEP_API_KEY)) {
      ctx.addIssue({ code: 'custom', path: [cfg.ZEP_API_URL ? 'ZEP_API_KEY' : 'ZEP_API_URL'], message: 'ZEP_API_URL and ZEP_API_KEY go together' });
    }
    if (cfg.CAREGIVER_ALERT_WEBHOOK_URL && !cfg.CAREGIVER_ALERT_WEBHOOK_SECRET) {
      ctx.addIssue({ code: 'custom', path: ['CAREGIVER_ALERT_WEBHOOK_SECRET'], message: 'required when CAREGIVER_ALERT_WEBHOOK_URL is set: the receiver checks each post’s signature with it' });
    }
    if (typeof cfg.MISTRAL_BASE_URL !== 'string') return;
    try {
      assertMistralBaseUrl(cfg.MISTRAL_BASE_URL, kohamiEnvOf(cfg));
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['MISTRAL_BASE_URL'], message: (err as Error).message });
    }
  })
  .transform((cfg) => ({
    ...cfg,
    KOHAMI_ENV: kohamiEnvOf(cfg),
    RECALL_BUDGET_MS: recallBudgetMs(cfg),
    STT_FLUSH_ANSWER_MS: cfg.STT_FLUSH_ANSWER_MS ?? flushAnswerMsFor(cfg.STT_BUDGET_MS),
  }));

export type Config = z.output<typeof schema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Reads the environment; any invalid value throws one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? 'environment');
    const value = env[name];
    const shown = value === undefined || /KEY|TOKEN|URL|OTLP_ENDPOINT|SECRET/.test(name) ? '' : ` (got "${value}")`;
    return `invalid configuration: ${name}${shown}: ${issue.message}`;
  });
  throw new ConfigError(lines.join('\n'));
}

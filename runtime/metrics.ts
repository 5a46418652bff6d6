import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Resolution of the event-loop delay histogram behind `nodejs_eventloop_lag_*` (perf_hooks'
 * monitorEventLoopDelay): 10 ms, prom-client's own, fine enough for a lag that matters at a
 * reply's 20 ms audio frames and cheap (one timer per process).
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 10;

let processRegistry: Registry | null = null;

/**
 * prom-client's process and Node.js metrics (CPU, RSS, heap spaces, GC by kind, event-loop lag,
 * handles), unprefixed as every Node exporter has them so stock dashboards and alerts apply. Made once
 * per process and shared by its runtimes' registries: they describe the process, and their collectors
 * (an event-loop delay monitor, a GC observer) cannot be stopped, so one per runtime would pile up.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
  }
  return processRegistry;
}

/** Every Prometheus metric of one runtime, on its own registry (tests start several runtimes). */
export function createMetrics() {
  const registry = new Registry();
  const shared = processMetrics();
  for (const { name } of shared.getMetricsAsArray()) registry.registerMetric(shared.getSingleMetric(name)!);
  /** Set once the session registry and the cache exist; read at each scrape. */
  const sources = {
    liveSessions: () => 0,
    semanticCacheEntries: () => 0,
    /** The derivation pool's state (runtime/jobs/derivation-pool.ts). */
    derivations: () => ({ queued: 0, inFlight: 0, transcripts: 0, bytes: 0 }),
  };
  const sampled = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  const liveSessions = sampled('kohami_live_sessions', 'Live session actors in this process', () => sources.liveSessions());
  const turns = new Counter({ name: 'kohami_turns_total', help: 'Answered turns, by the flux that answered', labelNames: ['flux'] as const, registers: [registry] });
  const turnLatency = new Histogram({
    name: 'kohami_turn_latency_seconds',
    help: 'From the transcript to the end of its reply, by flux',
    labelNames: ['flux'] as const,
    buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const sosFallbacks = new Counter({ name: 'kohami_sos_fallback_total', help: 'Turns answered by the SOS line, by reason', labelNames: ['reason'] as const, registers: [registry] });
  const cacheFluxHits = new Counter({ name: 'kohami_cacheflux_hits_total', help: 'Turns answered by CacheFlux', registers: [registry] });
  const dualWrite = new Counter({
    name: 'kohami_memory_dual_write_total',
    help: 'Memory operations per backend of the Zep/pgvector dual-write, by outcome',
    labelNames: ['backend', 'operation', 'outcome'] as const,
    registers: [registry],
  });
  const closeJobs = new Counter({
    name: 'kohami_close_jobs_total',
    help: 'Derivation jobs finished (mood and summary per turn, fact extraction and segment per session), by outcome: ok, skipped (no consent), error (a permanent failure, or retries exhausted)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const closeJobsLost = new Counter({
    name: 'kohami_close_jobs_lost_total',
    help: 'Close-time derivation jobs given up at shutdown because the drain budget (SHUTDOWN_DRAIN_MS) ran out',
    registers: [registry],
  });
  const closeJobsRetried = new Counter({
    name: 'kohami_close_jobs_retried_total',
    help: 'Derivation jobs tried again after a transient failure, by kind and cause (model: 429/503/5xx, a dropped connection or a timeout; database)',
    labelNames: ['kind', 'cause'] as const,
    registers: [registry],
  });
  const closeJobsDropped = new Counter({
    name: 'kohami_close_jobs_dropped_total',
    help: 'Derivation jobs dropped before they ran to the end, by kind and reason (memory_bound: past CLOSE_JOBS_MAX_TRANSCRIPTS or CLOSE_JOBS_MAX_HELD_MB; erased: the senior was erased)',
    labelNames: ['kind', 'reason'] as const,
    registers: [registry],
  });
  const closeJobsQueued = sampled('kohami_close_jobs_queued', 'Derivation jobs waiting to run: queued, or backing off before a retry', () => sources.derivations().queued);
  const closeJobsInFlight = sampled('kohami_close_jobs_in_flight', 'Derivation jobs running now', () => sources.derivations().inFlight);
  const closeJobsTranscripts = sampled('kohami_close_jobs_transcripts_held', 'Turns (transcript and reply) held in RAM by pending derivation jobs', () => sources.derivations().transcripts);
  const closeJobsHeldBytes = sampled('kohami_close_jobs_held_bytes', 'Bytes of the turns held in RAM by pending derivation jobs (UTF-16 text)', () => sources.derivations().bytes);
  const closeJobDuration = new Histogram({
    name: 'kohami_close_job_duration_seconds',
    help: 'Duration of close-time derivation jobs',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const semanticCacheLookups = new Counter({
    name: 'kohami_semantic_cache_lookups_total',
    help: 'Semantic cache lookups: hit, miss, bypass (off, follow-up without context, no embedding in time), refused (near-miss guard)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const semanticCacheRefusals = new Counter({
    name: 'kohami_semantic_cache_refusals_total',
    help: 'Questions kept out of the semantic cache, neither served from it nor stored, by reason: health (health, medication, symptoms, care), fresh_each_time (a joke, a story, a song… wanted new each time)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const semanticCacheVerdicts = new Counter({
    name: 'kohami_semantic_cache_verdicts_total',
    help: 'The semantic cache\'s model check (SEMANTIC_CACHE_VERIFY=model) on a similar question: yes, no, timeout, error (both misses), remembered (asked before)',
    labelNames: ['verdict'] as const,
    registers: [registry],
  });
  const semanticCacheSimilarity = new Histogram({
    name: 'kohami_semantic_cache_best_similarity',
    help: 'Best cosine similarity found per semantic cache lookup',
    buckets: [0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1],
    registers: [registry],
  });
  const semanticCacheEntries = sampled('kohami_semantic_cache_entries', 'Replies held by the semantic cache (RAM only)', () => sources.semanticCacheEntries());
  const voiceStage = new Histogram({
    name: 'kohami_voice_stage_seconds',
    help: 'Voice turns, per stage: endpointing (last speech to end of utterance), transcription (end of utterance to final transcript), first_token (transcript to first reply text), first_audio (transcript to first reply-audio frame sent)',
    labelNames: ['stage'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5],
    registers: [registry],
  });
  const bargeIn = new Counter({
    name: 'kohami_barge_in_total',
    help: 'Speech over reply audio, once per utterance: interrupted (the reply was cut), backchannel_ignored (« oui », « hum » … let it play) or false_interruption (speech with no word paused the reply, which then resumed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const speechErrors = new Counter({
    name: 'kohami_speech_errors_total',
    help: 'Speech service failures, by service: stt (transcription failed or late), tts (synthesis failed), espeak or pico (the offline voice, espeak-ng or SVOX Pico, failed)',
    labelNames: ['service'] as const,
    registers: [registry],
  });
  const opusEncoded = new Counter({
    name: 'kohami_opus_encoded_seconds_total',
    help: 'Seconds of reply audio the runtime encoded to Opus (the CPU an Opus kiosk costs): the speech service’s own Opus is relayed and a pre-synthesized line encoded once, so neither is counted again',
    registers: [registry],
  });
  const preemptiveTurns = new Counter({
    name: 'kohami_preemptive_turns_total',
    help: 'Speculative turns started during an end-of-turn wait, by how they ended: committed (the turn came on that transcript) or aborted (the senior went on, or said something else)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const preemptiveWasted = new Counter({
    name: 'kohami_preemptive_wasted_total',
    help: 'Calls made for a speculative turn that no turn used, by kind: model (a streamed chat request) or speech (a sentence synthesized)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const earlyFlushes = new Counter({
    name: 'kohami_stt_early_flushes_total',
    help: 'Transcriptions flushed a short way into a pause (STT_EARLY_FLUSH_MS), by what followed: turn (the turn ended on that text), resumed (the senior went on: the utterance is transcribed in segments) or rechecked (its text did not close the sentence: asked again at STT_RECHECK_MS with the pause audio since)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const sttWorkarounds = new Counter({
    name: 'kohami_stt_workarounds_total',
    help: 'Transcription service behaviours outside its documented contract that the runtime worked around, by event: setup_fallback (the undocumented settings were refused: documented ones alone from then on, once per process), no_session_updated, rate_limited, cumulative_final, flush_unanswered (its socket ended), flush_replayed (on a fresh socket), service_closed (an idle socket ended by the service)',
    labelNames: ['event'] as const,
    registers: [registry],
  });
  const voiceSessions = new Gauge({ name: 'kohami_voice_sessions', help: 'Voice sessions open in this process (microphone and speech attached to a live session)', registers: [registry] });
  const transcriptionSockets = new Gauge({ name: 'kohami_transcription_sockets', help: 'Voxtral realtime transcription sockets open from this process', registers: [registry] });
  return { registry, sources, voiceSessions, transcriptionSockets, sttWorkarounds, voiceStage, earlyFlushes, preemptiveTurns, preemptiveWasted, bargeIn, speechErrors, opusEncoded, semanticCacheLookups, semanticCacheRefusals, semanticCacheVerdicts, semanticCacheSimilarity, semanticCacheEntries, liveSessions, turns, turnLatency, sosFallbacks, cacheFluxHits, dualWrite, closeJobs, closeJobsLost, closeJobsRetried, closeJobsDropped, closeJobsQueued, closeJobsInFlight, closeJobsTranscripts, closeJobsHeldBytes, closeJobDuration };
}

export type Metrics = ReturnType<typeof createMetrics>;

import type pg from 'pg';
import type { Logger } from 'pino';
import type { CacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { FallbackSpeaker } from './fallback-speaker.ts';
import { createOfflineSpeaker } from './offline-speaker.ts';
import type { PreemptiveTurns } from './preemption/preemptive-turns.ts';
import { LineCache, SharedLines, sessionLines } from './line-cache.ts';
import { Listener } from '../../machines/voice/listener.ts';
import { PRE_ROLL_MS } from '../../machines/voice/voice.port.ts';
// Voxtral's adapters load @mistralai/mistralai (about 120 MiB resident): imported only with a key.
import type { MistralSpeaker } from '../../adapters/voice/mistral-speaker.ts';
import type { MistralTranscriber } from '../../adapters/voice/mistral-transcriber.ts';
import { VOXTRAL_STREAMING_DELAY_MS, type SocketCounter } from '../../adapters/voice/transcription-settings.ts';
import { SileroSpeechProbability } from '../../adapters/voice/silero-vad.ts';
import { WebRtcVoiceGate } from '../../adapters/voice/webrtc-vad.ts';
import type { ConsentPort } from '../../machines/memory/memory.port.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { contextBiasFor } from './context-bias.ts';
import { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import { validateEndOfTurnSettings, type EndOfTurnSettings } from '../../machines/voice/end-of-turn.ts';
import { PauseProfiles } from './pause-profiles.ts';
import type { VoiceServices } from './voice-session.types.ts';

export interface VoiceServiceDeps {
  pool: pg.Pool;
  consents: ConsentPort;
  variations: CacheVariations;
  metrics: Metrics;
  logger: Logger;
  /** Warms the senior's next turn (its embedding) from the interim transcript while endpointing waits; see VoiceServices. */
  prefetchTurn?: (seniorId: string, transcript: string) => void;
  /** The preemptive turn, when PREEMPTIVE_TURN is on. */
  preemptiveTurns?: PreemptiveTurns;
  /** Where turns go (the registry) and their spans; see VoiceServices. */
  turns?: VoiceServices['turns'];
  /** `npm run dev:inspect`: the voice sessions' turn-taking actors are inspected too. */
  inspect?: VoiceServices['inspect'];
  /** Voxtral's speaker when the runtime made it first, to check its voice at start (`checkSpeechVoice`); made here otherwise. */
  voxtral?: MistralSpeaker;
}

/** Voxtral's speaker with MISTRAL_API_KEY; none without. */
export async function createMistralSpeaker(config: Config, logger: Logger): Promise<MistralSpeaker | undefined> {
  const key = config.MISTRAL_API_KEY;
  if (!key) return undefined;
  const { MistralSpeaker } = await import('../../adapters/voice/mistral-speaker.ts');
  return new MistralSpeaker({ apiKey: key, baseUrl: config.MISTRAL_BASE_URL, env: config.KOHAMI_ENV, model: config.MISTRAL_TTS_MODEL, voice: config.MISTRAL_TTS_VOICE, logger });
}

export class UnknownVoiceError extends Error {
  override name = 'UnknownVoiceError';
}

/** The start-up error names at most this many of the voices listed. */
const VOICES_NAMED = 40;

/**
 * MISTRAL_TTS_VOICE against the voices the speech service lists, once at start: a voice it does not
 * list is an UnknownVoiceError naming the voices found (every sentence would be a 404, spoken by
 * the offline voice instead). A service that cannot say — unreachable, slow (`VOICE_CHECK_MS`), rate-limited —
 * is no reason to refuse to start: a warning, and the first sentence will tell.
 */
export async function checkSpeechVoice(speaker: MistralSpeaker, config: Config, logger: Logger): Promise<void> {
  const check = await speaker.checkVoice();
  if (check.kind === 'listed') return logger.info({ voice: config.MISTRAL_TTS_VOICE }, 'speech voice checked: the service lists it');
  if (check.kind === 'unchecked') return logger.warn({ voice: config.MISTRAL_TTS_VOICE, reason: check.reason }, 'speech voice not checked (the service did not answer its voice list): starting anyway');
  const named = check.voices.slice(0, VOICES_NAMED).join(', ');
  const more = check.voices.length > VOICES_NAMED ? `, … (${check.voices.length} in all)` : '';
  throw new UnknownVoiceError(
    `MISTRAL_TTS_VOICE "${config.MISTRAL_TTS_VOICE}" is not a voice the speech service lists (GET /v1/audio/voices at ${config.MISTRAL_BASE_URL}); ${check.voices.length === 0 ? 'it lists none' : `the voices it lists: ${named}${more}`}`,
  );
}

/**
 * The process's speech services. With MISTRAL_API_KEY: Voxtral realtime transcription and Voxtral
 * speech, falling back to the offline voice per sentence. Without: no speech-to-text (voice input off)
 * and the offline French voice for every reply (SVOX Pico when installed, else espeak-ng:
 * offline-speaker.ts), so typed turns are still spoken.
 */
export async function createVoiceServices(config: Config, deps: VoiceServiceDeps): Promise<VoiceServices> {
  const { metrics } = deps;
  const { speaker: offline, engine: offlineEngine } = createOfflineSpeaker(config, (err) => deps.logger.warn({ err }, 'SVOX Pico did not load: the offline voice is espeak-ng from now on'));
  const key = config.MISTRAL_API_KEY;
  const mistral = { apiKey: key ?? '', baseUrl: config.MISTRAL_BASE_URL, env: config.KOHAMI_ENV };
  const voxtral = deps.voxtral ?? (await createMistralSpeaker(config, deps.logger));
  const speaker = voxtral ? new FallbackSpeaker({ primary: voxtral, fallback: offline, onSpeechError: () => metrics.speechErrors.inc({ service: 'tts' }) }) : offline;
  // Pre-synthesized lines are kept in one voice: Mistral's alone, never the fallback speaker's (its
  // offline renders would be kept process-wide as Mistral's); the SOS lines' offline stand-ins are the
  // line cache's own, replaced once Mistral answers again.
  const lineSpeaker = voxtral ?? offline;
  const shared = new SharedLines();
  const facts = new PgMemoryFactsRepository(deps.pool);
  const transcriptionSockets: SocketCounter = { opened: () => metrics.transcriptionSockets.inc(), closed: () => metrics.transcriptionSockets.dec() };
  const pauses = new PauseProfiles(new PgProfilesRepository(deps.pool), deps.consents, deps.logger);
  const transcriber = key ? await transcriberFor(config, mistral, deps, transcriptionSockets) : null;
  return {
    transcriber,
    speaker,
    opus: opusCodec({ complexity: config.OPUS_COMPLEXITY, onEncoded: (seconds) => metrics.opusEncoded.inc(seconds) }),
    async createListener(callbacks) {
      const [gate, detector] = await Promise.all([WebRtcVoiceGate.create(), SileroSpeechProbability.create()]);
      const listener = new Listener(
        {
          gate,
          detector,
          endpointSilenceMs: config.ENDPOINT_SILENCE_MS,
          endpointMaxMs: config.ENDPOINT_MAX_MS,
          minSpeechMs: config.MIN_SPEECH_MS,
          preRollMs: PRE_ROLL_MS,
          maxUtteranceMs: config.MAX_UTTERANCE_MS,
        },
        callbacks,
      );
      return {
        push: (pcm) => listener.push(pcm),
        get speechMs() {
          return listener.speechMs;
        },
        get paused() {
          return listener.paused;
        },
        get silenceMs() {
          return listener.silenceMs;
        },
        get pauses() {
          return listener.pauses;
        },
        get levelDb() {
          return listener.levelDb;
        },
        endpointAt: (silenceMs) => listener.endpointAt(silenceMs),
        reset: () => listener.reset(),
        close: () => {
          gate.close();
          // Gives the session's slot in the Silero worker back at once, not at garbage collection.
          detector.close();
        },
      };
    },
    linesFor(session, sampleRate) {
      const lines = sessionLines(deps.variations, session.actor.getSnapshot().context.profile, { checkin: config.IDLE_CHECKIN_MS > 0 });
      const cache = new LineCache({ speaker: lineSpeaker, lastResort: offline, lines, shared, seniorId: session.seniorId, sampleRate });
      void cache.warm();
      return { get: (text) => cache.get(text), close: () => cache.close() };
    },
    invalidateSenior: (seniorId) => shared.invalidateSenior(seniorId),
    // Off (the default), the names are neither read nor sent.
    contextBias: async (session) => (config.STT_CONTEXT_BIAS === 'on' ? contextBiasFor(facts, deps.consents, session.seniorId, session.actor.getSnapshot().context.profile.preferredName) : []),
    settings: { sttBudgetMs: config.STT_BUDGET_MS, earlyFlushMs: config.STT_EARLY_FLUSH_MS, recheckMs: config.STT_RECHECK_MS, preRollMs: PRE_ROLL_MS, sttDelayMs: config.STT_STREAMING_DELAY_MS ?? VOXTRAL_STREAMING_DELAY_MS, bargeInMinMs: config.BARGE_IN_MIN_MS, maxUtteranceMs: config.MAX_UTTERANCE_MS, endOfTurn: endOfTurnSettings(config) },
    savePauses: (seniorId, heard) => pauses.save(seniorId, heard),
    pausesSettled: () => pauses.settled(),
    // Online, the fallback speaker already counted the service's failure; offline, the offline voice failed.
    onSentenceLost: () => {
      if (!key) metrics.speechErrors.inc({ service: offlineEngine });
    },
    metrics,
    logger: deps.logger,
    pacing: { falseInterruptionMs: config.FALSE_INTERRUPTION_MS, idleCheckinMs: config.IDLE_CHECKIN_MS },
    ...(deps.prefetchTurn ? { prefetchTurn: deps.prefetchTurn } : {}),
    ...(deps.preemptiveTurns ? { preemptiveTurns: deps.preemptiveTurns } : {}),
    ...(deps.turns ? { turns: deps.turns } : {}),
    ...(deps.inspect ? { inspect: deps.inspect } : {}),
  };
}

/** Voxtral realtime with the voice settings; STT_BUDGET_MS is the flush's one bound (the transcriber's own default would cap it at 5 s). */
async function transcriberFor(config: Config, mistral: { apiKey: string; baseUrl: string; env: Config['KOHAMI_ENV'] }, deps: VoiceServiceDeps, sockets: SocketCounter): Promise<MistralTranscriber> {
  const { MistralTranscriber } = await import('../../adapters/voice/mistral-transcriber.ts');
  return new MistralTranscriber({
    ...mistral,
    model: config.MISTRAL_STT_MODEL,
    flushTimeoutMs: config.STT_BUDGET_MS,
    flushAnswerMs: config.STT_FLUSH_ANSWER_MS,
    idleCloseMs: config.STT_IDLE_CLOSE_MS,
    flushMode: config.STT_FLUSH_MODE,
    ...(config.STT_STREAMING_DELAY_MS !== undefined ? { streamingDelayMs: config.STT_STREAMING_DELAY_MS } : {}),
    ...(config.STT_LANGUAGE !== undefined ? { language: config.STT_LANGUAGE } : {}),
    contextBias: config.STT_CONTEXT_BIAS === 'on',
    sockets,
    onServiceEvent: (event) => deps.metrics.sttWorkarounds.inc({ event }),
    logger: deps.logger,
  });
}

/** The end-of-turn waits from the configuration (its schema already checked their order). */
export function endOfTurnSettings(config: Config): EndOfTurnSettings {
  const settings = { minMs: config.ENDPOINT_MIN_MS, silenceMs: config.ENDPOINT_SILENCE_MS, unfinishedMs: config.ENDPOINT_UNFINISHED_MS, maxMs: config.ENDPOINT_MAX_MS };
  validateEndOfTurnSettings(settings);
  return settings;
}

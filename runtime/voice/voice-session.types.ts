import type { Logger } from 'pino';
import type { InspectionEvent } from 'xstate';
import type { TurnTraces, VoiceTurnTiming } from '../../adapters/telemetry/turn-traces.ts';
import type { Context } from '@opentelemetry/api';
import type { EndOfTurnSettings } from '../../machines/voice/end-of-turn.ts';
import type { ListenerEvents, OpusCodecPort, SpeakerPort, TranscriberPort } from '../../machines/voice/voice.port.ts';
import type { AudioFormat } from '../protocol/server-frames.ts';
import type { Metrics } from '../metrics.ts';
import type { LiveSession } from '../sessions/session-registry.ts';
import type { PreemptiveTurns } from './preemption/preemptive-turns.ts';
import type { LineLookup } from './reply-audio.ts';
import type { VoiceLink } from './voice-link.ts';

/** The microphone front end of one session (machines/voice/listener.ts): it tells, it is not asked. */
export interface SessionListener {
  push(pcm: Int16Array): Promise<void>;
  /** The end-of-turn decision: end the utterance once the pause's silence reaches `silenceMs` (now if it has). */
  endpointAt(silenceMs: number): void;
  reset(): void;
  close(): void;
}

/** What every voice session of the process shares. */
export interface VoiceServices {
  /** Null offline (no MISTRAL_API_KEY): there is no speech-to-text, typed turns are still spoken. */
  transcriber: TranscriberPort | null;
  speaker: SpeakerPort;
  /** Opus on the kiosk socket (docs/voice.md#opus); absent: the sessions negotiate PCM only. */
  opus?: OpusCodecPort;
  createListener(events: ListenerEvents): Promise<SessionListener>;
  /** The session's pre-synthesized lines (SOS, neutral, CacheFlux replies with the senior's name) at `sampleRate`, warming up. */
  linesFor(session: LiveSession, sampleRate: number): { get: LineLookup; close(): void };
  /** RGPD erasure: the senior's kept personal lines (their greetings' audio) go. Returns how many. */
  invalidateSenior(seniorId: string): number;
  /** Words the recognizer should favour for this senior (preferred name; contact names under consent). */
  contextBias(session: LiveSession): Promise<string[]>;
  /**
   * `sttDelayMs`: how far behind the audio the recognizer's words come (STT_STREAMING_DELAY_MS);
   * `earlyFlushMs`: the pause's silence at which its text is flushed (STT_EARLY_FLUSH_MS, 0: off);
   * `recheckMs`: the silence at which a flushed text that did not close is asked for again (STT_RECHECK_MS, 0: off);
   * `preRollMs`: the audio the listener hands out before each utterance's speech.
   */
  settings: { sttBudgetMs: number; earlyFlushMs: number; recheckMs: number; preRollMs: number; sttDelayMs: number; bargeInMinMs: number; maxUtteranceMs: number; endOfTurn: EndOfTurnSettings };
  /**
   * Optional: writes back the mid-sentence pauses (ms, numbers only) a session heard, folded into the
   * senior's stored pause profile, if the `conversation` consent still holds. Called once, at close,
   * only for a session that was given a profile (the consent held at its start). Must not throw.
   */
  savePauses?: (seniorId: string, pauses: readonly number[]) => void;
  /** Resolves once the pause profiles being written have been (tests, shutdown). */
  pausesSettled?: () => Promise<void>;
  /** A sentence of a reply could not be spoken at all (counted once, by the service that failed). */
  onSentenceLost(): void;
  metrics: Metrics;
  logger: Logger;
  /** Taking turns over a reply: FALSE_INTERRUPTION_MS (speech with no word pauses the reply) and IDLE_CHECKIN_MS (0: off). */
  pacing: { falseInterruptionMs: number; idleCheckinMs: number };
  /**
   * Optional: called with the interim transcript when the senior stops speaking (the endpointing
   * silence starts counting) and again if the interim changes during that silence, so the turn's
   * work (its embedding, shared by recall and the semantic cache) starts before the endpoint. Fire
   * and forget: it must not throw nor log the text; a resumed sentence simply calls it again later.
   */
  prefetchTurn?: (seniorId: string, transcript: string) => void;
  /** The preemptive turn (PREEMPTIVE_TURN): absent when off. */
  preemptiveTurns?: PreemptiveTurns;
  /**
   * Where a turn goes (the registry's `turn`, which opens its span and hands over its context) and the
   * turns' spans. Absent (tests of the voice session alone): turns go straight to the actor, untraced.
   */
  turns?: { start(session: LiveSession, turnId: string, transcript: string, voice: VoiceTurnTiming | undefined, opened: (trace: Context) => void): void; traces: TurnTraces };
  /** The Stately inspector (`npm run dev:inspect`): each session's turn-taking actor, redacted as the session actors are. */
  inspect?: (event: InspectionEvent) => void;
}

export interface VoiceSessionHandle {
  /** False offline (no speech-to-text), and from the moment the session's speech detectors failed to load. */
  readonly voiceInput: boolean;
  pushAudio(pcm: Int16Array): void;
  /** One Opus microphone packet (an Opus input session): null when taken, else why it was dropped (malformed). */
  pushPacket(packet: Uint8Array): string | null;
  typedTurn(turnId: string, transcript: string): void;
  interrupt(turnId: string, playedMs?: number): void;
  playbackProgress(turnId: string, playedMs: number): void;
  playbackDone(turnId: string): void;
  mute(muted: boolean): void;
  close(): void;
}

export interface VoiceSessionRequest {
  session: LiveSession;
  link: VoiceLink;
  /** The microphone's format; absent: PCM s16le at 16 kHz. */
  input?: AudioFormat;
  output: AudioFormat;
  aec: boolean;
  /**
   * The kiosk gates its microphone (session.start `audio.kiosk.gate`): a gap in its audio is silence
   * and is filled as such. Otherwise a gap is a network stall, whose audio comes late: filling it would
   * put silence mid-word (a turn ended mid-sentence) before the late audio.
   */
  gate?: boolean;
  /** The next voice turn's id (`v1`, `v2` …), admitted among the session's turnIds. */
  nextTurnId(): string;
}

export interface VoiceSessionFactory {
  /** Whether sessions may negotiate Opus (the codec is there). */
  readonly opus: boolean;
  create(request: VoiceSessionRequest): VoiceSessionHandle;
}

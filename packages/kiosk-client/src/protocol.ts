/**
 * The kiosk protocol's JSON frames as TypeScript types (docs/protocol.md, docs/protocol.schema.json).
 * Written out here so the package depends on nothing; packages/kiosk-client/test/protocol-types.test.ts
 * fails `npm run typecheck` when they differ from the runtime's zod schemas.
 */

export type AudioEncoding = 'pcm_s16le' | 'opus';
export interface AudioFormat {
  encoding: AudioEncoding;
  sampleRate: number;
}

/** Which flow answered a turn; `checkin` is voice mode's idle check-in line (it answers no turn). */
export type Flux = 'cache' | 'recall' | 'agent' | 'semantic_cache' | 'sos' | 'neutral' | 'checkin';
/** Why the SOS line was spoken (only with flux `sos`). */
export type SosReason = 'budget' | 'model_error' | 'empty_reply' | 'flux_error' | 'stall' | 'shutdown' | 'rate_limited' | 'transcription';
export type CloseReason = 'ended' | 'pause' | 'disconnected' | 'replaced' | 'shutdown' | 'operator' | 'erased';
export type ServerErrorCode =
  | 'invalid_json'
  | 'unknown_type'
  | 'invalid_frame'
  | 'binary_not_supported'
  | 'rate_limited'
  | 'no_session'
  | 'duplicate_turn'
  | 'unsupported_audio_format'
  | 'audio_not_negotiated'
  | 'speech_unavailable'
  | 'audio_rate_limited'
  | 'start_rate_limited';

export interface SessionReadyFrame {
  type: 'session.ready';
  sessionId: string;
  seniorId: string;
  resumed: boolean;
  mode?: 'text' | 'voice';
  /**
   * Voice sessions only: the negotiated formats. `voiceInput: false`: no speech-to-text, send typed turns.
   * `gaps: true`: the runtime accepts a speech gate; a kiosk that declared one (`kiosk.gate`) may stop its microphone
   * between utterances, and the runtime hears a gap as silence.
   */
  audio?: { input: AudioFormat; output: AudioFormat; aec: boolean; voiceInput: boolean; gaps: boolean };
}
export interface ReplyDeltaFrame {
  type: 'reply.delta';
  turnId: string;
  text: string;
}
export interface ReplyDoneFrame {
  type: 'reply.done';
  turnId: string;
  /** Exactly the concatenation of the turn's reply.delta texts, or the single line spoken. */
  text: string;
  flux: Flux;
  latencyMs: number;
  interrupted?: true;
  reason?: SosReason;
}
export interface ErrorFrame {
  type: 'error';
  code: ServerErrorCode;
  message: string;
  turnId?: string;
  retryAfterMs?: number;
}
export interface SessionClosedFrame {
  type: 'session.closed';
  reason: CloseReason;
}
export interface PongFrame {
  type: 'pong';
}
export interface VadFrame {
  type: 'vad';
  state: 'speech_started' | 'speech_stopped';
}
export interface TranscriptDeltaFrame {
  type: 'transcript.delta';
  text: string;
}
export interface TranscriptFinalFrame {
  type: 'transcript.final';
  turnId: string;
  text: string;
}
export interface ReplyAudioStartFrame {
  type: 'reply.audio.start';
  turnId: string;
  encoding: AudioEncoding;
  sampleRate: number;
}
export interface ReplyAudioMarkFrame {
  type: 'reply.audio.mark';
  turnId: string;
  sampleOffset: number;
  textOffset: number;
}
export interface ReplyAudioEndFrame {
  type: 'reply.audio.end';
  turnId: string;
  durationMs: number;
}
export interface ReplyAudioClearFrame {
  type: 'reply.audio.clear';
  turnId: string;
}
export interface ReplyAudioPauseFrame {
  type: 'reply.audio.pause';
  turnId: string;
}
export interface ReplyAudioResumeFrame {
  type: 'reply.audio.resume';
  turnId: string;
}

/** A JSON text frame the runtime sends. */
export type ServerFrame =
  | SessionReadyFrame
  | ReplyDeltaFrame
  | ReplyDoneFrame
  | ErrorFrame
  | SessionClosedFrame
  | PongFrame
  | VadFrame
  | TranscriptDeltaFrame
  | TranscriptFinalFrame
  | ReplyAudioStartFrame
  | ReplyAudioMarkFrame
  | ReplyAudioEndFrame
  | ReplyAudioClearFrame
  | ReplyAudioPauseFrame
  | ReplyAudioResumeFrame;
export type ServerFrameType = ServerFrame['type'];

/**
 * What a voice `session.start` asks for: the microphone's format, the reply formats playable (best first), echo
 * cancellation, and `gate: true` if the kiosk sends its microphone only around speech (where `session.ready` says `gaps`).
 */
export interface VoiceAudioRequest {
  input: { encoding: string; sampleRate: number };
  output: { accept: Array<{ encoding: string; sampleRate: number }> };
  kiosk: { aec: boolean; gate?: boolean };
}

/** A JSON text frame a kiosk sends. */
export type ClientFrame =
  | { type: 'session.start'; resume?: boolean; mode?: 'text' }
  | { type: 'session.start'; resume?: boolean; mode: 'voice'; audio: VoiceAudioRequest }
  | { type: 'turn'; turnId: string; transcript: string }
  | { type: 'interrupt'; turnId: string; playedMs?: number }
  | { type: 'session.end' }
  | { type: 'ping' }
  | { type: 'playback.progress'; turnId: string; playedMs: number }
  | { type: 'playback.done'; turnId: string }
  | { type: 'mic'; muted: boolean };

/** A turnId's limits (docs/protocol.md): 1–128 characters, at most 255 bytes in UTF-8 (the audio frame header's length byte). */
export const MAX_TURN_ID_CHARS = 128;
export const MAX_TURN_ID_BYTES = 255;
/** A typed turn's transcript: 1–16,000 characters, not blank. */
export const MAX_TRANSCRIPT_CHARS = 16_000;
/** Close code of a runtime shutting down (IANA "Service Restart"): reconnect, to another instance. */
export const SERVICE_RESTART = 1012;

/**
 * Voice mode's ports: what the runtime's audio pipeline needs from speech services, with no
 * SDK or driver in sight. Audio is always mono signed 16-bit PCM (`Int16Array`); the microphone
 * arrives at 16 kHz, speech leaves at the speaker's own rate and is resampled for the kiosk.
 * Nothing here is ever persisted or logged: audio and transcripts live in RAM for one turn.
 */

import type { Heard } from './turn-taking.types.ts';

export const INPUT_SAMPLE_RATE = 16_000;
/** Audio the listener hands out from before the speech it detected, so the first syllable reaches the recognizer. */
export const PRE_ROLL_MS = 300;

/** Speech probability of one analysis window (Silero: 512 samples at 16 kHz). */
export interface SpeechProbability {
  /** Samples per window the detector wants. */
  readonly windowSamples: number;
  /** 0–1 for one window of exactly `windowSamples` samples at 16 kHz. Stateful: one instance per stream. */
  probability(window: Int16Array): Promise<number>;
  reset(): void;
}

/** Cheap voiced/unvoiced decision (WebRTC VAD) used to gate the neural detector. */
export interface VoiceGate {
  /** Samples per frame the gate wants (10, 20 or 30 ms at 16 kHz). */
  readonly frameSamples: number;
  isVoiced(frame: Int16Array): boolean;
}

/** What the microphone front end tells its session: speech's edges, its audio, one reading per chunk inside an utterance. */
export interface ListenerEvents {
  /** Speech confirmed (minimum duration reached). */
  speechStarted(): void;
  /** Utterance audio, pre-roll first, while speaking (to the transcription stream). */
  audio(pcm: Int16Array): void;
  speechStopped(reason: 'silence' | 'max_length'): void;
  /** Confident speech came back after a pause of `pauseMs` inside an utterance (the pause did not end it). */
  speechResumed?(pauseMs: number): void;
  /** After each chunk analysed inside an utterance: where speech and its pause stand. */
  heard?(heard: Heard): void;
}

/** One open transcription stream of a session (Voxtral realtime): kept across utterances. */
export interface TranscriptionStream {
  /** Microphone audio of the utterance being spoken (pre-roll included). */
  append(pcm: Int16Array): void;
  /** End of speech: resolves with the final transcript of what was appended since the last flush. */
  flush(signal: AbortSignal): Promise<string>;
  /** Interim text as it arrives (display only; may drive early recall). */
  onDelta(listener: (text: string) => void): void;
  close(): void;
}

/** A flush that got no final transcript within its bound: the turn is answered with the SOS line. */
export class TranscriptionTimeoutError extends Error {
  override name = 'TranscriptionTimeoutError';
}

export interface TranscriberPort {
  /** `contextBias`: words the recognizer should favour (the senior's names, under consent). */
  open(options: { contextBias: string[]; signal: AbortSignal }): Promise<TranscriptionStream>;
}

/** One Opus packet (RFC 6716, 10–60 ms, its TOC already read) and the audio it carries. */
export interface OpusSpeechPacket {
  packet: Uint8Array;
  durationMs: number;
}

/** A piece of a sentence on the Opus path: a packet to relay as is, or PCM at the speaker's rate to encode. */
export type SpeechPiece = OpusSpeechPacket | Int16Array;

export interface SpeakerPort {
  /** Identifies the voice, for the pre-synthesized lines' cache key. */
  readonly voiceId: string;
  /** The rate of the PCM it yields. */
  readonly sampleRate: number;
  /** Streams one sentence's speech; stops (and aborts its request) when `signal` aborts. */
  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array>;
  /**
   * Optional, for a kiosk that takes Opus (docs/voice.md#opus): the sentence as the service's own
   * Opus packets, relayed without decoding (a packet decodes at any Opus rate, so one stream serves
   * every negotiated rate). A speaker that cannot keep to Opus (a fallback, a stream refused) yields
   * PCM at `sampleRate` instead, which the reply encodes. The same abort and error contract as `synthesize`.
   */
  synthesizeOpus?(text: string, signal: AbortSignal): AsyncIterable<SpeechPiece>;
}

/**
 * One direction of one session's Opus audio (docs/voice.md#opus): stateful (a packet is decoded
 * against the ones before it), so one per microphone stream and one per reply. `close()` frees its
 * codec memory; a closed codec throws.
 */
export interface OpusDecoderPort {
  /** One Opus packet → mono PCM at the decoder's rate. Throws a RangeError on a malformed packet. */
  decode(packet: Uint8Array): Int16Array;
  close(): void;
}

export interface OpusEncoderPort {
  readonly sampleRate: number;
  /** Samples per packet (20 ms at `sampleRate`): `encode` takes exactly this many. */
  readonly frameSamples: number;
  encode(frame: Int16Array): Uint8Array;
  close(): void;
}

/** Opus encoders and decoders (a WASM libopus behind it). */
export interface OpusCodecPort {
  /** `sampleRate`: what the PCM comes out at (INPUT_SAMPLE_RATE, the microphone pipeline's, unless told). */
  decoder(sampleRate?: number): OpusDecoderPort;
  encoder(sampleRate: number): OpusEncoderPort;
}

import { z } from 'zod';
import { INPUT_SAMPLE_RATE } from '../../machines/voice/voice.port.ts';
import type { AudioEncoding, AudioFormat, ErrorCode } from './server-frames.ts';
import { frameUnion, type FramesOf } from './frame-union.ts';
import { turnId } from './turn-id.ts';

/** Frames over this size close the socket with 1009 (a transcript is a few hundred bytes). */
export const MAX_FRAME_BYTES = 64 * 1024;
/** Close code when this process is shutting down (IANA "Service Restart"): the kiosk reconnects, to another instance. */
export const SERVICE_RESTART = 1012;

/** Reply-audio rates a kiosk may accept; the runtime resamples its speech to the one chosen. */
export const OUTPUT_SAMPLE_RATES = [16_000, 24_000, 48_000] as const;
/** Rates a kiosk may capture at for Opus input: whatever the rate, packets are decoded at 16 kHz. */
export const OPUS_INPUT_SAMPLE_RATES = [16_000, 24_000, 48_000] as const;

// Formats are checked loosely here and refused with `unsupported_audio_format` by `negotiateAudio`,
// so that a kiosk asking for, say, mp3 learns which formats exist rather than a schema error.
const audioFormat = z.object({ encoding: z.string().min(1).max(32), sampleRate: z.number().int().positive() });
const VoiceAudioSchema = z.object({
  input: audioFormat,
  output: z.object({ accept: z.array(audioFormat).min(1).max(16) }),
  kiosk: z.object({
    aec: z.boolean(),
    gate: z.boolean().optional().describe('true: a client-side speech gate; the microphone may stop between utterances, so the runtime hears a gap as silence (only where session.ready says audio.gaps). Default false: a gap is a network stall, nothing is filled'),
  }),
});
export type VoiceAudioRequest = z.infer<typeof VoiceAudioSchema>;

const resume = z.boolean().optional().describe('re-attach to the live session (its window kept)');
const TextStartSchema = z.object({ type: z.literal('session.start'), resume, mode: z.literal('text').optional() });
const VoiceStartSchema = z.object({ type: z.literal('session.start'), resume, mode: z.literal('voice'), audio: VoiceAudioSchema });
// Discriminated by `mode` (absent: text), so that a refusal names the field at fault.
const SessionStartSchema = z.discriminatedUnion('mode', [TextStartSchema, VoiceStartSchema]).describe('Open the senior\'s session, in text mode (the default) or voice mode.');

// Descriptions are for docs/protocol.schema.json; docs/protocol.md says the rest.
export const CLIENT_FRAME_SCHEMAS = {
  'session.start': SessionStartSchema,
  turn: z.object({ type: z.literal('turn'), turnId, transcript: z.string().trim().min(1).max(16_000).describe('final speech-to-text text, not blank') }).describe('The senior said this.'),
  interrupt: z.object({ type: z.literal('interrupt'), turnId, playedMs: z.number().nonnegative().max(3_600_000).optional() }).describe('Barge-in: stop the reply of that turn now.'),
  'session.end': z.object({ type: z.literal('session.end') }).describe('The conversation is over.'),
  ping: z.object({ type: z.literal('ping') }).describe('Application-level liveness; answered by pong.'),
  'playback.progress': z.object({ type: z.literal('playback.progress'), turnId, playedMs: z.number().nonnegative().max(3_600_000) }).describe('Voice: how much of the turn\'s reply audio has been played.'),
  'playback.done': z.object({ type: z.literal('playback.done'), turnId }).describe('Voice: the turn\'s reply audio finished playing.'),
  mic: z.object({ type: z.literal('mic'), muted: z.boolean() }).describe('Voice: stop (true) or resume (false) listening.'),
} as const;

export type ClientFrame = FramesOf<typeof CLIENT_FRAME_SCHEMAS>;
export const CLIENT_FRAME_TYPES = Object.keys(CLIENT_FRAME_SCHEMAS) as Array<ClientFrame['type']>;
/** What a kiosk may send; the gateway parses by `type` itself (`parseClientFrame`), for its error messages. */
export const ClientFrameSchema = frameUnion(CLIENT_FRAME_SCHEMAS, 'A JSON text frame a kiosk sends (client → runtime), by its type.');
/** Frames that only mean something in a voice session. */
export const VOICE_FRAME_TYPES: ReadonlySet<string> = new Set(['playback.progress', 'playback.done', 'mic']);

/** A refusal carries the turnId of the frame it refuses, when that frame had a usable one. */
export type ParseResult = { ok: true; frame: ClientFrame } | { ok: false; code: ErrorCode; message: string; turnId?: string };

/** The turnId of a `turn` or `interrupt` frame, even if another of its fields is wrong. */
function turnIdIn(data: object): string | undefined {
  const candidate = (data as { turnId?: unknown }).turnId;
  return turnId.safeParse(candidate).success ? (candidate as string) : undefined;
}

/** The turnId of a `turn` frame the gateway drops unread (rate limit), so that its refusal can name it. */
export function droppedTurnId(raw: string): string | undefined {
  try {
    const data: unknown = JSON.parse(raw);
    if (typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'turn') return turnIdIn(data);
  } catch {
    // not JSON: not a turn
  }
  return undefined;
}

/** Every failure names what is wrong, so a device maker can fix the client from the message alone. */
export function parseClientFrame(raw: string): ParseResult {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return { ok: false, code: 'invalid_json', message: 'frame is not valid JSON' };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, code: 'invalid_frame', message: 'frame must be a JSON object with a "type"' };
  }
  const type = (data as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(CLIENT_FRAME_SCHEMAS, type)) {
    return { ok: false, code: 'unknown_type', message: `unknown frame type ${JSON.stringify(type ?? null)}; expected one of ${CLIENT_FRAME_TYPES.join(', ')}` };
  }
  const parsed = CLIENT_FRAME_SCHEMAS[type as ClientFrame['type']].safeParse(data);
  if (parsed.success) return { ok: true, frame: parsed.data as ClientFrame };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'frame'}: ${i.message}`).join('; ');
  const id = type === 'turn' || type === 'interrupt' ? turnIdIn(data) : undefined;
  return { ok: false, code: 'invalid_frame', message: `invalid ${type} frame: ${issues}`, ...(id !== undefined ? { turnId: id } : {}) };
}

/** A microphone frame carries this much audio, in ms. */
export const MIC_FRAME_MS = { min: 10, max: 200 } as const;
export const micFrameBytes = (ms: number) => (INPUT_SAMPLE_RATE * 2 * ms) / 1000;

/**
 * Why a binary microphone frame of `byteLength` bytes is refused, or null if it is one. The minimum is
 * not pedantry: the byte budget alone would let a kiosk send 24,000 two-byte frames a second, each a
 * message to parse and a call into the listener; at 10 ms a frame it is 150 a second at most.
 */
export function micFrameProblem(byteLength: number): string | null {
  const min = micFrameBytes(MIC_FRAME_MS.min);
  const max = micFrameBytes(MIC_FRAME_MS.max);
  if (byteLength % 2 === 0 && byteLength >= min && byteLength <= max) return null;
  return `a microphone frame is ${MIC_FRAME_MS.min}–${MIC_FRAME_MS.max} ms of pcm_s16le at ${INPUT_SAMPLE_RATE} Hz mono: an even number of bytes from ${min} to ${max}; got ${byteLength} bytes (frame dropped)`;
}

export type Negotiation = { ok: true; input: AudioFormat; output: AudioFormat; aec: boolean; gate: boolean } | { ok: false; message: string };

const ENCODINGS: Record<AudioEncoding, true> = { pcm_s16le: true, opus: true };
const isEncoding = (encoding: string): encoding is AudioEncoding => Object.hasOwn(ENCODINGS, encoding);
const producible = (f: { encoding: string; sampleRate: number }, opus: boolean) =>
  isEncoding(f.encoding) && (opus || f.encoding !== 'opus') && (OUTPUT_SAMPLE_RATES as readonly number[]).includes(f.sampleRate);

/**
 * The formats of a voice session. Microphone: PCM s16le at 16 kHz (what Voxtral realtime and the
 * voice detectors take), or Opus packets decoded to it. Reply audio: the kiosk's first accepted format
 * the runtime can produce (PCM or Opus at 16, 24 or 48 kHz), so a kiosk that lists PCM after Opus falls
 * back to it. An input the runtime cannot take is refused (the kiosk offers one input, and learns which exist).
 */
export function negotiateAudio(audio: VoiceAudioRequest, codecs: { opus: boolean }): Negotiation {
  const { input } = audio;
  const pcmIn = input.encoding === 'pcm_s16le' && input.sampleRate === INPUT_SAMPLE_RATE;
  const opusIn = codecs.opus && input.encoding === 'opus' && (OPUS_INPUT_SAMPLE_RATES as readonly number[]).includes(input.sampleRate);
  if (!pcmIn && !opusIn) {
    const opus = codecs.opus ? ` or {encoding: "opus", sampleRate: ${OPUS_INPUT_SAMPLE_RATES.join(' | ')}}` : '';
    return {
      ok: false,
      message: `audio.input must be {encoding: "pcm_s16le", sampleRate: ${INPUT_SAMPLE_RATE}}${opus}; got ${JSON.stringify({ encoding: input.encoding, sampleRate: input.sampleRate })}`,
    };
  }
  const output = audio.output.accept.find((f) => producible(f, codecs.opus));
  if (!output) {
    return { ok: false, message: `audio.output.accept names no format the runtime produces; accepted: ${codecs.opus ? 'pcm_s16le or opus' : 'pcm_s16le'} at ${OUTPUT_SAMPLE_RATES.join(', ')} Hz` };
  }
  return {
    ok: true,
    input: { encoding: input.encoding as AudioEncoding, sampleRate: input.sampleRate },
    output: { encoding: output.encoding as AudioEncoding, sampleRate: output.sampleRate },
    aec: audio.kiosk.aec,
    gate: audio.kiosk.gate ?? false,
  };
}

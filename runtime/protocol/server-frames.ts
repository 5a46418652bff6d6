import { z } from 'zod';
import { CLOSE_REASONS, SOS_REASONS } from '../../machines/session/session.types.ts';
import { FLUXES } from '../../machines/session/ports.ts';
import { frameUnion, type FramesOf } from './frame-union.ts';
import { turnId } from './turn-id.ts';

/**
 * Runtime → kiosk frames. The runtime never parses these: the schemas are what its send path is typed
 * from (`ServerFrame`) and what docs/protocol.schema.json is generated from, so the two cannot differ.
 * Strict objects: a frame carries exactly these fields, and the protocol tests fail on one more.
 */

export const ERROR_CODES = [
  'invalid_json',
  'unknown_type',
  'invalid_frame',
  'binary_not_supported',
  'rate_limited',
  'no_session',
  'duplicate_turn',
  'unsupported_audio_format',
  'audio_not_negotiated',
  'speech_unavailable',
  'audio_rate_limited',
  'start_rate_limited',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** `transcription`: a voice turn whose words never arrived (speech-to-text failed or was late). */
const REPLY_SOS_REASONS = [...SOS_REASONS, 'transcription'] as const;
/** `checkin`: voice mode's idle check-in line, spoken by the voice session itself (not a turn: nothing was said). */
const REPLY_FLUXES = [...FLUXES, 'checkin'] as const;

/** PCM s16le, or raw Opus packets (docs/protocol.md#opus). */
const audioEncoding = z.enum(['pcm_s16le', 'opus']);
export type AudioEncoding = z.infer<typeof audioEncoding>;
const audioFormat = z.strictObject({ encoding: audioEncoding, sampleRate: z.number().int().positive() });
export type AudioFormat = z.infer<typeof audioFormat>;

const ms = z.number().int().nonnegative();

export const SERVER_FRAME_SCHEMAS = {
  'session.ready': z
    .strictObject({
      type: z.literal('session.ready'),
      sessionId: z.string().min(1),
      seniorId: z.string().min(1),
      resumed: z.boolean(),
      mode: z.enum(['text', 'voice']).optional(),
      audio: z
        .strictObject({
          input: audioFormat,
          output: audioFormat,
          aec: z.boolean(),
          voiceInput: z.boolean().describe('false: no speech-to-text service; send typed turns (their replies are still spoken)'),
          gaps: z.boolean().describe('true: the runtime accepts a client-side speech gate; a kiosk that declared one (session.start audio.kiosk.gate) may stop its microphone audio between utterances, and a gap is heard as silence, so the turn still ends'),
        })
        .optional()
        .describe('voice sessions only: the negotiated formats'),
    })
    .describe('The session is live (answers session.start).'),
  'reply.delta': z.strictObject({ type: z.literal('reply.delta'), turnId, text: z.string() }).describe('A chunk of the reply, to speak (or caption) as it comes.'),
  'reply.done': z
    .strictObject({
      type: z.literal('reply.done'),
      turnId,
      text: z.string().describe('exactly the concatenation of the turn\'s reply.delta texts, or the single line spoken'),
      flux: z.enum(REPLY_FLUXES),
      latencyMs: ms,
      interrupted: z.literal(true).optional(),
      reason: z.enum(REPLY_SOS_REASONS).optional().describe('why the SOS line was spoken; only with flux "sos"'),
    })
    .describe('The whole reply: every turn gets exactly one.'),
  error: z
    .strictObject({
      type: z.literal('error'),
      code: z.enum(ERROR_CODES),
      message: z.string(),
      turnId: turnId.optional().describe('the refused turn, whenever the frame had a usable turnId'),
      retryAfterMs: ms.optional().describe('start_rate_limited only: the wait before a session.start is admitted again'),
    })
    .describe('A frame was refused; the session lives on.'),
  'session.closed': z.strictObject({ type: z.literal('session.closed'), reason: z.enum(CLOSE_REASONS) }).describe('The session is over on this socket.'),
  pong: z.strictObject({ type: z.literal('pong') }).describe('Answer to ping.'),
  vad: z.strictObject({ type: z.literal('vad'), state: z.enum(['speech_started', 'speech_stopped']) }).describe('Voice: the senior started / finished speaking.'),
  'transcript.delta': z.strictObject({ type: z.literal('transcript.delta'), text: z.string() }).describe('Voice: the utterance\'s interim transcript so far (replaces the previous one; display only).'),
  'transcript.final': z.strictObject({ type: z.literal('transcript.final'), turnId, text: z.string() }).describe('Voice: what the senior said, now the session\'s turn turnId.'),
  'reply.audio.start': z
    .strictObject({ type: z.literal('reply.audio.start'), turnId, encoding: audioEncoding, sampleRate: z.number().int().positive() })
    .describe('Voice: the turn\'s reply audio begins, in the negotiated format; binary frames follow.'),
  'reply.audio.mark': z
    .strictObject({ type: z.literal('reply.audio.mark'), turnId, sampleOffset: z.number().int().nonnegative(), textOffset: z.number().int().nonnegative() })
    .describe('Voice: once playback has passed sampleOffset, the senior has heard reply.done.text up to textOffset (characters).'),
  'reply.audio.end': z.strictObject({ type: z.literal('reply.audio.end'), turnId, durationMs: ms }).describe('Voice: the turn\'s reply audio has all been sent (not yet played).'),
  'reply.audio.clear': z.strictObject({ type: z.literal('reply.audio.clear'), turnId }).describe('Voice: stop that turn\'s audio now and drop what is buffered (barge-in).'),
  'reply.audio.pause': z.strictObject({ type: z.literal('reply.audio.pause'), turnId }).describe('Voice: stop that turn\'s audio now, keeping its place and its buffer.'),
  'reply.audio.resume': z.strictObject({ type: z.literal('reply.audio.resume'), turnId }).describe('Voice: play that turn\'s audio on from where the pause stopped it.'),
} as const;

export type ServerFrame = FramesOf<typeof SERVER_FRAME_SCHEMAS>;
export const ServerFrameSchema = frameUnion(SERVER_FRAME_SCHEMAS, 'A JSON text frame the runtime sends (runtime → client), by its type.');

import { z } from 'zod';
import type { CloseReason, SosReason } from '../../machines/session.machine.ts';
import type { Flux } from '../../machines/ports.ts';

/** Frames over this size close the socket with 1009 (a transcript is a few hundred bytes). */
export const MAX_FRAME_BYTES = 64 * 1024;
/** Close code when this process is shutting down (IANA "Service Restart"): the kiosk reconnects, to another instance. */
export const SERVICE_RESTART = 1012;

const turnId = z.string().min(1).max(128);

export const ClientFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session.start'), resume: z.boolean().optional() }),
  z.object({ type: z.literal('turn'), turnId, transcript: z.string().trim().min(1).max(16_000) }),
  z.object({ type: z.literal('interrupt'), turnId }),
  z.object({ type: z.literal('session.end') }),
  z.object({ type: z.literal('ping') }),
]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;
export const CLIENT_FRAME_TYPES = ClientFrameSchema.options.map((o) => o.shape.type.value);

export type ErrorCode = 'invalid_json' | 'unknown_type' | 'invalid_frame' | 'binary_not_supported' | 'rate_limited' | 'no_session' | 'duplicate_turn';

export type ServerFrame =
  | { type: 'session.ready'; sessionId: string; seniorId: string; resumed: boolean }
  | { type: 'reply.delta'; turnId: string; text: string }
  | { type: 'reply.done'; turnId: string; text: string; flux: Flux; latencyMs: number; interrupted?: true; reason?: SosReason }
  | { type: 'error'; code: ErrorCode; message: string; turnId?: string }
  | { type: 'session.closed'; reason: CloseReason }
  | { type: 'pong' };

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
  if (typeof type !== 'string' || !(CLIENT_FRAME_TYPES as string[]).includes(type)) {
    return { ok: false, code: 'unknown_type', message: `unknown frame type ${JSON.stringify(type ?? null)}; expected one of ${CLIENT_FRAME_TYPES.join(', ')}` };
  }
  const parsed = ClientFrameSchema.safeParse(data);
  if (parsed.success) return { ok: true, frame: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'frame'}: ${i.message}`).join('; ');
  const id = type === 'turn' || type === 'interrupt' ? turnIdIn(data) : undefined;
  return { ok: false, code: 'invalid_frame', message: `invalid ${type} frame: ${issues}`, ...(id !== undefined ? { turnId: id } : {}) };
}

import { KioskError } from './errors.ts';
import type { ServerFrame, ServerFrameType } from './protocol.ts';

type Kind = 'string' | 'number' | 'boolean' | 'object';
type Fields = { [K in ServerFrameType]: Partial<Record<Exclude<keyof Extract<ServerFrame, { type: K }>, 'type'>, Kind>> };

/**
 * The fields each frame must carry, with their JSON kinds: what the client's own code and a listener
 * read without checking. Extra fields are let through (a newer runtime may add some); the full
 * rules are docs/protocol.schema.json's.
 */
const REQUIRED: Fields = {
  'session.ready': { sessionId: 'string', seniorId: 'string', resumed: 'boolean' },
  'reply.delta': { turnId: 'string', text: 'string' },
  'reply.done': { turnId: 'string', text: 'string', flux: 'string', latencyMs: 'number' },
  error: { code: 'string', message: 'string' },
  'session.closed': { reason: 'string' },
  pong: {},
  vad: { state: 'string' },
  'transcript.delta': { text: 'string' },
  'transcript.final': { turnId: 'string', text: 'string' },
  'reply.audio.start': { turnId: 'string', encoding: 'string', sampleRate: 'number' },
  'reply.audio.mark': { turnId: 'string', sampleOffset: 'number', textOffset: 'number' },
  'reply.audio.end': { turnId: 'string', durationMs: 'number' },
  'reply.audio.clear': { turnId: 'string' },
  'reply.audio.pause': { turnId: 'string' },
  'reply.audio.resume': { turnId: 'string' },
};

/** Every server frame type, in protocol order. */
export const SERVER_FRAME_TYPES = Object.keys(REQUIRED) as ServerFrameType[];

export type ParsedFrame = { ok: true; frame: ServerFrame } | { ok: false; error: KioskError };

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** A text frame from the runtime, checked; never throws. */
export function parseServerFrame(text: string): ParsedFrame {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return bad(`not JSON: ${preview(text)}`);
  }
  if (kindOf(data) !== 'object') return bad(`a ${kindOf(data)}, not a JSON object with a "type": ${preview(text)}`);
  const type = (data as { type?: unknown }).type;
  if (typeof type !== 'string') return bad(`no string "type": ${preview(text)}`);
  if (!Object.hasOwn(REQUIRED, type)) return { ok: false, error: new KioskError('unknown_frame', `unknown frame type ${JSON.stringify(type)} (dropped)`) };
  for (const [field, kind] of Object.entries(REQUIRED[type as ServerFrameType]) as Array<[string, Kind]>) {
    const value = (data as Record<string, unknown>)[field];
    if (kindOf(value) !== kind) return bad(`${type}.${field} must be a ${kind}, got ${kindOf(value)}`);
  }
  return { ok: true, frame: data as ServerFrame };
}

function bad(message: string): ParsedFrame {
  return { ok: false, error: new KioskError('bad_frame', `the runtime sent a frame that is not the kiosk protocol: ${message}`) };
}

const preview = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);

import { KioskError } from './errors.ts';
import { MAX_TURN_ID_BYTES } from './protocol.ts';

/**
 * Reply-audio binary frames (docs/protocol.md, "Runtime → kiosk"):
 * [u8 version = 1][u8 n][n bytes turnId, UTF-8][u32 LE sampleOffset][payload]
 * The payload is PCM s16le, or one 20 ms Opus packet when the session negotiated Opus output.
 * Microphone frames (kiosk → runtime) carry no header: raw PCM s16le, or one Opus packet.
 */
export const AUDIO_FRAME_VERSION = 1;
const MAX_SAMPLE_OFFSET = 0xffff_ffff;

export interface AudioFrame {
  turnId: string;
  /** Where the payload's first sample sits in the turn's reply audio, in samples at the negotiated rate. */
  sampleOffset: number;
  /** PCM s16le bytes, or one Opus packet. */
  payload: Uint8Array;
}

export type DecodedAudioFrame = { ok: true; frame: AudioFrame } | { ok: false; error: KioskError };

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A reply-audio frame's bytes; throws a KioskError (`invalid_argument`) for an id or offset the header cannot carry. */
export function encodeAudioFrame(turnId: string, sampleOffset: number, payload: Uint8Array): Uint8Array {
  const id = utf8.encode(turnId);
  if (id.length === 0 || id.length > MAX_TURN_ID_BYTES) throw new KioskError('invalid_argument', `audio frame: turnId must be 1–${MAX_TURN_ID_BYTES} UTF-8 bytes, got ${id.length}`);
  if (!Number.isInteger(sampleOffset) || sampleOffset < 0 || sampleOffset > MAX_SAMPLE_OFFSET) {
    throw new KioskError('invalid_argument', `audio frame: sampleOffset must be an integer in 0–${MAX_SAMPLE_OFFSET}, got ${sampleOffset}`);
  }
  const headerBytes = 2 + id.length + 4;
  const bytes = new Uint8Array(headerBytes + payload.length);
  bytes[0] = AUDIO_FRAME_VERSION;
  bytes[1] = id.length;
  bytes.set(id, 2);
  new DataView(bytes.buffer).setUint32(2 + id.length, sampleOffset, true);
  bytes.set(payload, headerBytes);
  return bytes;
}

/** A reply-audio frame from the runtime; a malformed one is an error value naming what is wrong, never a throw. */
export function decodeAudioFrame(bytes: Uint8Array): DecodedAudioFrame {
  if (bytes.length < 2) return bad(`${bytes.length} bytes is shorter than a header`);
  if (bytes[0] !== AUDIO_FRAME_VERSION) return bad(`unknown version ${bytes[0]}`);
  const idLength = bytes[1]!;
  if (idLength === 0) return bad('empty turnId');
  const headerBytes = 2 + idLength + 4;
  if (bytes.length < headerBytes) return bad(`${bytes.length} bytes is shorter than its ${headerBytes}-byte header`);
  let turnId: string;
  try {
    turnId = strictUtf8.decode(bytes.subarray(2, 2 + idLength));
  } catch {
    return bad('turnId is not valid UTF-8');
  }
  const sampleOffset = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(2 + idLength, true);
  return { ok: true, frame: { turnId, sampleOffset, payload: bytes.subarray(headerBytes) } };
}

function bad(message: string): DecodedAudioFrame {
  return { ok: false, error: new KioskError('bad_frame', `audio frame: ${message} (dropped)`) };
}

/** PCM s16le bytes as samples (little-endian whatever the platform); an odd trailing byte is ignored. */
export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pcm = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < pcm.length; i++) pcm[i] = view.getInt16(i * 2, true);
  return pcm;
}

/** Samples as PCM s16le bytes, the microphone frame's payload. */
export function pcmToBytes(pcm: Int16Array): Uint8Array {
  const bytes = new Uint8Array(pcm.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i]!, true);
  return bytes;
}

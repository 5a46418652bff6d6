/**
 * Reply-audio binary frames: a small header ties each frame to its turn and sample offset so the
 * kiosk drops frames of a cleared turn and reports progress against the marks.
 * Layout: [u8 version=1][u8 n = turnId UTF-8 byte length][n bytes turnId][u32 LE sampleOffset][payload]
 * The payload is PCM s16le, or one Opus packet when the session negotiated Opus output.
 */

export const AUDIO_FRAME_VERSION = 1;
/** The header's one length byte: the most UTF-8 bytes a turnId can have (the kiosk protocol refuses longer ones). */
export const MAX_TURN_ID_BYTES = 255;
const MAX_SAMPLE_OFFSET = 0xffff_ffff;

export interface AudioFrame {
  turnId: string;
  /** Offset of the frame's first sample in the turn's reply audio. */
  sampleOffset: number;
  pcm: Int16Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeAudioFrame(turnId: string, sampleOffset: number, pcm: Int16Array): Uint8Array {
  const { bytes, view, headerBytes } = frameWithHeader(turnId, sampleOffset, pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) view.setInt16(headerBytes + i * 2, pcm[i]!, true);
  return bytes;
}

/** A frame whose payload is one Opus packet (its samples start at `sampleOffset`). */
export function encodePacketFrame(turnId: string, sampleOffset: number, packet: Uint8Array): Uint8Array {
  const { bytes, headerBytes } = frameWithHeader(turnId, sampleOffset, packet.length);
  bytes.set(packet, headerBytes);
  return bytes;
}

function frameWithHeader(turnId: string, sampleOffset: number, payloadBytes: number): { bytes: Uint8Array; view: DataView; headerBytes: number } {
  const id = encoder.encode(turnId);
  if (id.length === 0 || id.length > MAX_TURN_ID_BYTES) throw new RangeError(`audio frame: turnId must be 1–${MAX_TURN_ID_BYTES} UTF-8 bytes, got ${id.length}`);
  if (!Number.isInteger(sampleOffset) || sampleOffset < 0 || sampleOffset > MAX_SAMPLE_OFFSET) {
    throw new RangeError(`audio frame: sampleOffset must be an integer in 0–${MAX_SAMPLE_OFFSET}, got ${sampleOffset}`);
  }
  const headerBytes = 2 + id.length + 4;
  const bytes = new Uint8Array(headerBytes + payloadBytes);
  const view = new DataView(bytes.buffer);
  bytes[0] = AUDIO_FRAME_VERSION;
  bytes[1] = id.length;
  bytes.set(id, 2);
  view.setUint32(2 + id.length, sampleOffset, true);
  return { bytes, view, headerBytes };
}

/** A frame's header and its payload as bytes (an Opus packet, or PCM): throws a RangeError naming what is wrong. */
export function decodeFrameHeader(bytes: Uint8Array): { turnId: string; sampleOffset: number; payload: Uint8Array } {
  if (bytes.length < 2) throw new RangeError(`audio frame: ${bytes.length} bytes is shorter than a header`);
  if (bytes[0] !== AUDIO_FRAME_VERSION) throw new RangeError(`audio frame: unknown version ${bytes[0]}`);
  const idLength = bytes[1]!;
  if (idLength === 0) throw new RangeError('audio frame: empty turnId');
  const headerBytes = 2 + idLength + 4;
  if (bytes.length < headerBytes) throw new RangeError(`audio frame: ${bytes.length} bytes is shorter than its ${headerBytes}-byte header`);
  let turnId: string;
  try {
    turnId = decoder.decode(bytes.subarray(2, 2 + idLength));
  } catch {
    throw new RangeError('audio frame: turnId is not valid UTF-8');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { turnId, sampleOffset: view.getUint32(2 + idLength, true), payload: bytes.subarray(headerBytes) };
}

/** Throws a RangeError naming what is wrong with a malformed frame. */
export function decodeAudioFrame(bytes: Uint8Array): AudioFrame {
  const { turnId, sampleOffset, payload } = decodeFrameHeader(bytes);
  if (payload.length % 2 !== 0) throw new RangeError('audio frame: odd PCM byte length');
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const pcm = new Int16Array(payload.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = view.getInt16(i * 2, true);
  return { turnId, sampleOffset, pcm };
}

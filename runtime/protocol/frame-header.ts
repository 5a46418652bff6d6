/**
 * Reply-audio binary frames: a small header ties each frame to its turn and sample offset so the
 * kiosk drops frames of a cleared turn and reports progress against the marks.
 * Layout: [u8 version=1][u8 n = turnId UTF-8 byte length][n bytes turnId][u32 LE sampleOffset][PCM s16le …]
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
  const id = encoder.encode(turnId);
  if (id.length === 0 || id.length > MAX_TURN_ID_BYTES) throw new RangeError(`audio frame: turnId must be 1–${MAX_TURN_ID_BYTES} UTF-8 bytes, got ${id.length}`);
  if (!Number.isInteger(sampleOffset) || sampleOffset < 0 || sampleOffset > MAX_SAMPLE_OFFSET) {
    throw new RangeError(`audio frame: sampleOffset must be an integer in 0–${MAX_SAMPLE_OFFSET}, got ${sampleOffset}`);
  }
  const headerBytes = 2 + id.length + 4;
  const bytes = new Uint8Array(headerBytes + pcm.length * 2);
  const view = new DataView(bytes.buffer);
  bytes[0] = AUDIO_FRAME_VERSION;
  bytes[1] = id.length;
  bytes.set(id, 2);
  view.setUint32(2 + id.length, sampleOffset, true);
  for (let i = 0; i < pcm.length; i++) view.setInt16(headerBytes + i * 2, pcm[i]!, true);
  return bytes;
}

/** Throws a RangeError naming what is wrong with a malformed frame. */
export function decodeAudioFrame(bytes: Uint8Array): AudioFrame {
  if (bytes.length < 2) throw new RangeError(`audio frame: ${bytes.length} bytes is shorter than a header`);
  if (bytes[0] !== AUDIO_FRAME_VERSION) throw new RangeError(`audio frame: unknown version ${bytes[0]}`);
  const idLength = bytes[1]!;
  if (idLength === 0) throw new RangeError('audio frame: empty turnId');
  const headerBytes = 2 + idLength + 4;
  if (bytes.length < headerBytes) throw new RangeError(`audio frame: ${bytes.length} bytes is shorter than its ${headerBytes}-byte header`);
  if ((bytes.length - headerBytes) % 2 !== 0) throw new RangeError('audio frame: odd PCM byte length');
  let turnId: string;
  try {
    turnId = decoder.decode(bytes.subarray(2, 2 + idLength));
  } catch {
    throw new RangeError('audio frame: turnId is not valid UTF-8');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sampleOffset = view.getUint32(2 + idLength, true);
  const pcm = new Int16Array((bytes.length - headerBytes) / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = view.getInt16(headerBytes + i * 2, true);
  return { turnId, sampleOffset, pcm };
}

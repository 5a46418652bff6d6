/**
 * What an Opus packet's first bytes say (RFC 6716 §3.1), read before any decoding: the microphone's
 * budget is spent in audio time and a frame that is not one packet of 10–60 ms is refused without
 * reaching the codec. The decoder still checks the rest of the packet.
 */

/** The largest packet accepted: three frames of libopus's 1,275-byte maximum, plus their lengths. */
export const MAX_OPUS_PACKET_BYTES = 1276 * 3;
/** A packet carries this much audio, in ms: the PCM frames' 10 ms floor, and the decoder's 60 ms buffer. */
export const OPUS_PACKET_MS = { min: 10, max: 60 } as const;

/** Frame duration (ms) of each of the 32 configurations of the TOC byte. */
function frameMs(config: number): number {
  if (config < 12) return [10, 20, 40, 60][config % 4]!; // SILK
  if (config < 16) return [10, 20][config % 2]!; // hybrid
  return [2.5, 5, 10, 20][config % 4]!; // CELT
}

export type OpusPacketInfo = { ok: true; durationMs: number } | { ok: false; problem: string };

export function opusPacketInfo(packet: Uint8Array): OpusPacketInfo {
  if (packet.length === 0) return { ok: false, problem: 'an empty Opus packet' };
  if (packet.length > MAX_OPUS_PACKET_BYTES) return { ok: false, problem: `an Opus packet of ${packet.length} bytes (at most ${MAX_OPUS_PACKET_BYTES})` };
  const toc = packet[0]!;
  const code = toc & 3;
  let frames: number;
  if (code === 0) frames = 1;
  else if (code === 1) {
    if ((packet.length - 1) % 2 !== 0) return { ok: false, problem: 'an Opus packet of two equal frames with an odd payload' };
    frames = 2;
  } else if (code === 2) {
    if (packet.length < 2) return { ok: false, problem: 'an Opus packet of two frames with no frame length' };
    frames = 2;
  } else {
    if (packet.length < 2) return { ok: false, problem: 'an Opus packet of several frames with no frame count' };
    frames = packet[1]! & 0x3f;
    if (frames === 0) return { ok: false, problem: 'an Opus packet of zero frames' };
  }
  const durationMs = frames * frameMs(toc >> 3);
  if (durationMs < OPUS_PACKET_MS.min || durationMs > OPUS_PACKET_MS.max) {
    return { ok: false, problem: `an Opus packet of ${durationMs} ms (one packet of ${OPUS_PACKET_MS.min}–${OPUS_PACKET_MS.max} ms per frame)` };
  }
  return { ok: true, durationMs };
}

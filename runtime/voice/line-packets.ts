import type { OpusSpeechPacket } from '../../machines/voice/voice.port.ts';

/**
 * The Opus packets of each pre-synthesized line (SOS, greetings, the check-in), kept beside its PCM:
 * the first Opus reply that speaks a line encodes it whole, every later one (any session at that rate)
 * sends the same packets with no encoding. Keyed by the PCM itself, which is already one per voice,
 * rate and text (SharedLines; a stand-in is its session's own): the packets go when the line does,
 * evicted or erased with its senior, and no separate size is needed (they are about a fourteenth of it).
 */
const packets = new WeakMap<Int16Array, readonly OpusSpeechPacket[]>();

export function encodedLine(pcm: Int16Array): readonly OpusSpeechPacket[] | undefined {
  return packets.get(pcm);
}

/** Only a whole line's packets are kept (a reply cut mid-line leaves the next one to encode it). */
export function keepEncodedLine(pcm: Int16Array, encoded: readonly OpusSpeechPacket[]): void {
  packets.set(pcm, encoded);
}

import { OggOpusDemuxer, startsWith } from './ogg-opus.ts';
import { opusPacketInfo } from './opus-packet.ts';
import type { OpusSpeechPacket } from './voice.port.ts';

/**
 * What a speech service sends back for `response_format: "opus"`, told from its first delta: Mistral
 * does not document the container, and both are reported of OpenAI-like speech endpoints.
 * - `ogg`: an Ogg Opus stream (RFC 7845, pages beginning "OggS"), read by the demuxer;
 * - `packets`: raw Opus packets, one per delta, in no container (a bare OpusHead or OpusTags is skipped);
 * - `other`: anything else (WAV, MP3, FLAC, PCM): not Opus the kiosk could take as it is.
 */
export type OpusAnswerKind = 'ogg' | 'packets' | 'other';

export class OpusAnswerError extends Error {
  override name = 'OpusAnswerError';
}

/** The first bytes of the containers a service could send instead, any of which might pass for an Opus TOC byte. */
const OTHER_CONTAINERS = ['RIFF', 'ID3', 'fLaC', 'caff', '#!AMR'];
const OPUS_HEADERS = ['OpusHead', 'OpusTags'];

/**
 * `accepts`: whether the kiosk's decoder takes a packet (libopus, in the adapter): a raw stream has no
 * header to say it is Opus, so its first packet is decoded once before any is relayed.
 */
export function sniffOpusAnswer(first: Uint8Array, accepts: (packet: Uint8Array) => boolean): OpusAnswerKind {
  if (startsWith(first, 'OggS')) return 'ogg';
  if (OTHER_CONTAINERS.some((magic) => startsWith(first, magic)) || mpegAudioSync(first)) return 'other';
  if (OPUS_HEADERS.some((magic) => startsWith(first, magic))) return 'packets';
  return opusPacketInfo(first).ok && accepts(first) ? 'packets' : 'other';
}

/**
 * One `opus` answer read as it arrives, whatever its container: `push` each delta's bytes, get the
 * packets it completes (each one's TOC read: 10–60 ms, well formed). Throws OggOpusError (a malformed
 * Ogg stream) or OpusAnswerError (a raw packet that is not one); stop reading then.
 */
export class OpusAnswerReader {
  /** Known from the first non-empty delta on. */
  kind: OpusAnswerKind | null = null;
  private readonly ogg = new OggOpusDemuxer();
  private readonly accepts: (packet: Uint8Array) => boolean;

  constructor(accepts: (packet: Uint8Array) => boolean) {
    this.accepts = accepts;
  }

  push(delta: Uint8Array): OpusSpeechPacket[] {
    if (delta.length === 0) return [];
    this.kind ??= sniffOpusAnswer(delta, this.accepts);
    if (this.kind === 'ogg') return this.ogg.push(delta);
    if (this.kind === 'other' || OPUS_HEADERS.some((magic) => startsWith(delta, magic))) return [];
    const info = opusPacketInfo(delta);
    if (!info.ok) throw new OpusAnswerError(`the raw Opus answer carries ${info.problem}`);
    // A copy: the delta may be a view into a pool its producer reuses.
    return [{ packet: new Uint8Array(delta), durationMs: info.durationMs }];
  }

  /** The answer is over: an Ogg stream must end whole (a raw one has nothing pending), and an answer must have come. */
  end(): void {
    if (this.kind === null) throw new OpusAnswerError('the answer carried no audio');
    if (this.kind === 'ogg') this.ogg.end();
  }
}

/** An MPEG audio frame header (MP3 without an ID3 tag): 11 bits of sync. */
function mpegAudioSync(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0;
}

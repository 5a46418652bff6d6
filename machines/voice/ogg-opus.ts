import { opusPacketInfo } from './opus-packet.ts';
import type { OpusSpeechPacket } from './voice.port.ts';

/**
 * Ogg Opus (RFC 7845) read as a stream: the bytes of one speech response, in whatever pieces they
 * arrive, out as the raw Opus packets inside (the kiosk protocol carries packets, never a container).
 * Pure and bounded: at most one page is buffered (an Ogg page is at most 65,307 bytes), a packet is at
 * most `MAX_PACKET_BYTES`, every page's CRC is checked, and each audio packet's TOC is read
 * (`opusPacketInfo`) before it is handed on. Anything else is an `OggOpusError` naming the problem.
 */

/** 27 header bytes, 255 lacing values, 255 segments of 255 bytes. */
export const MAX_OGG_PAGE_BYTES = 27 + 255 + 255 * 255;
/** A packet spanning pages (OpusTags may) is refused past this. */
const MAX_PACKET_BYTES = 64 * 1024;
const HEADER_BYTES = 27;
const CAPTURE = [0x4f, 0x67, 0x67, 0x53]; // "OggS"
const FLAG_CONTINUED = 1;
const FLAG_FIRST = 2;

export class OggOpusError extends Error {
  override name = 'OggOpusError';
}

/** What the stream's identification header (OpusHead) says. */
export interface OpusHead {
  channels: number;
  /** Samples at 48 kHz the decoder drops at the start (the encoder's lookahead). */
  preSkip: number;
  /** The rate the encoder was fed (informative: a packet decodes at any Opus rate). */
  inputSampleRate: number;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32 (polynomial 0x04c11db7, not reflected, no final xor), the checksum field read as zero. */
export function oggCrc(page: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < page.length; i++) {
    const byte = i >= 22 && i < 26 ? 0 : page[i]!;
    crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  }
  return crc;
}

export class OggOpusDemuxer {
  /** The stream's OpusHead once read. */
  head: OpusHead | null = null;
  private buffer: Uint8Array = new Uint8Array(0);
  private serial: number | null = null;
  private sequence = -1;
  /** The pieces of a packet that continues on the next page. */
  private partial: Uint8Array[] = [];
  private partialBytes = 0;
  /** Header packets seen in the current logical stream (OpusHead, then OpusTags). */
  private headers = 0;

  /** The audio packets completed by `bytes`. Throws OggOpusError on a malformed stream (stop reading it then). */
  push(bytes: Uint8Array): OpusSpeechPacket[] {
    const joined = new Uint8Array(this.buffer.length + bytes.length);
    joined.set(this.buffer);
    joined.set(bytes, this.buffer.length);
    const out: OpusSpeechPacket[] = [];
    let at = 0;
    for (;;) {
      const page = pageLength(joined, at);
      if (page === null) break;
      this.page(joined.subarray(at, at + page), out);
      at += page;
    }
    this.buffer = joined.slice(at);
    return out;
  }

  /** The response is over: a page or packet cut short is an error, as is a stream with no OpusHead. */
  end(): void {
    if (this.buffer.length > 0) throw new OggOpusError(`the Ogg stream ends inside a page (${this.buffer.length} bytes left)`);
    if (this.partialBytes > 0) throw new OggOpusError('the Ogg stream ends inside a packet');
    if (this.head === null) throw new OggOpusError('the Ogg stream has no OpusHead');
  }

  private page(page: Uint8Array, out: OpusSpeechPacket[]): void {
    const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
    const flags = page[5]!;
    const serial = view.getUint32(14, true);
    const sequence = view.getUint32(18, true);
    if (view.getUint32(22, true) !== oggCrc(page)) throw new OggOpusError(`Ogg page ${sequence}: bad CRC`);
    if (flags & FLAG_FIRST) {
      // A new logical stream (a chained one after the first ends): its headers come again.
      if (this.partialBytes > 0) throw new OggOpusError('a new Ogg stream begins inside a packet');
      this.serial = serial;
      this.headers = 0;
    } else if (serial !== this.serial) {
      throw new OggOpusError(this.serial === null ? 'the Ogg stream does not begin with a first page' : 'a second, interleaved Ogg stream (one is expected)');
    } else if (sequence !== this.sequence + 1) {
      throw new OggOpusError(`Ogg page ${sequence} after ${this.sequence}: a page is missing`);
    }
    this.sequence = sequence;
    if (!(flags & FLAG_CONTINUED) && this.partialBytes > 0) throw new OggOpusError(`Ogg page ${sequence}: a packet left unfinished`);
    if (flags & FLAG_CONTINUED && this.partialBytes === 0) throw new OggOpusError(`Ogg page ${sequence}: continues a packet that was not begun`);
    const segments = page[26]!;
    let data = HEADER_BYTES + segments;
    for (let i = 0; i < segments; i++) {
      const lacing = page[HEADER_BYTES + i]!;
      this.partial.push(page.subarray(data, data + lacing));
      this.partialBytes += lacing;
      data += lacing;
      if (this.partialBytes > MAX_PACKET_BYTES) throw new OggOpusError(`an Ogg packet over ${MAX_PACKET_BYTES} bytes`);
      if (lacing < 255) this.packet(out);
    }
  }

  private packet(out: OpusSpeechPacket[]): void {
    const packet = this.partial.length === 1 ? this.partial[0]!.slice() : concat(this.partial, this.partialBytes);
    this.partial = [];
    this.partialBytes = 0;
    if (this.headers === 0) {
      this.head = opusHead(packet);
      this.headers = 1;
      return;
    }
    if (this.headers === 1) {
      if (!startsWith(packet, 'OpusTags')) throw new OggOpusError('the Ogg stream has no OpusTags after its OpusHead');
      this.headers = 2;
      return;
    }
    const info = opusPacketInfo(packet);
    if (!info.ok) throw new OggOpusError(`the Ogg stream carries ${info.problem}`);
    out.push({ packet, durationMs: info.durationMs });
  }
}

/** The whole page's length if it is all in `bytes` from `at`, null if more is needed; throws if it is not a page. */
function pageLength(bytes: Uint8Array, at: number): number | null {
  const left = bytes.length - at;
  for (let i = 0; i < Math.min(4, left); i++) if (bytes[at + i] !== CAPTURE[i]) throw new OggOpusError('not an Ogg page (no "OggS" capture pattern)');
  if (left < HEADER_BYTES) return null;
  if (bytes[at + 4] !== 0) throw new OggOpusError(`Ogg version ${bytes[at + 4]} (0 expected)`);
  const segments = bytes[at + 26]!;
  if (left < HEADER_BYTES + segments) return null;
  let length = HEADER_BYTES + segments;
  for (let i = 0; i < segments; i++) length += bytes[at + HEADER_BYTES + i]!;
  return left < length ? null : length;
}

function opusHead(packet: Uint8Array): OpusHead {
  if (packet.length < 19 || !startsWith(packet, 'OpusHead')) throw new OggOpusError('the Ogg stream does not begin with an OpusHead');
  if (packet[8]! >> 4 !== 0) throw new OggOpusError(`OpusHead version ${packet[8]} (0.x expected)`);
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  const channels = packet[9]!;
  // Family 0 is one Opus stream of 1–2 channels: its packets are what a kiosk's mono decoder takes.
  if (packet[18] !== 0 || channels < 1 || channels > 2) throw new OggOpusError(`an Opus stream of ${channels} channels, mapping family ${packet[18]} (one stream, mono or stereo, expected)`);
  return { channels, preSkip: view.getUint16(10, true), inputSampleRate: view.getUint32(12, true) };
}

/** Whether `packet` begins with the ASCII bytes of `magic`. */
export function startsWith(packet: Uint8Array, magic: string): boolean {
  if (packet.length < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (packet[i] !== magic.charCodeAt(i)) return false;
  return true;
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

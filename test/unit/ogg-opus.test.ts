import { describe, expect, it } from 'vitest';
import { opusCodec } from '../../adapters/voice/opus-codec.ts';
import { MAX_OGG_PAGE_BYTES, OggOpusDemuxer, OggOpusError, oggCrc } from '../../machines/voice/ogg-opus.ts';
import { oggOpusStream, oggPage } from '../support/ogg-opus-writer.ts';

/** 20 ms packets of a 440 Hz tone, encoded by the real codec at 24 kHz. */
function tonePackets(count: number): Uint8Array[] {
  const encoder = opusCodec().encoder(24_000);
  const packets: Uint8Array[] = [];
  for (let p = 0; p < count; p++) {
    const frame = new Int16Array(encoder.frameSamples);
    for (let i = 0; i < frame.length; i++) frame[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * (p * frame.length + i)) / 24_000));
    packets.push(encoder.encode(frame));
  }
  encoder.close();
  return packets;
}

const packets = tonePackets(25);
const stream = oggOpusStream(packets, { inputSampleRate: 24_000, packetsPerPage: 7 });

function demuxAll(bytes: Uint8Array, pieceSize = bytes.length) {
  const demuxer = new OggOpusDemuxer();
  const out = [];
  for (let at = 0; at < bytes.length; at += pieceSize) out.push(...demuxer.push(bytes.subarray(at, at + pieceSize)));
  demuxer.end();
  return { demuxer, out };
}

/** Page `index` of `bytes` (0: OpusHead), as [start, end). */
function pageBounds(bytes: Uint8Array, index: number): [number, number] {
  let at = 0;
  for (;;) {
    let length = 27 + bytes[at + 26]!;
    for (let i = 0; i < bytes[at + 26]!; i++) length += bytes[at + 27 + i]!;
    if (index-- === 0) return [at, at + length];
    at += length;
  }
}

describe('OggOpusDemuxer', () => {
  it('gives back the packets written, whole and in order, with their durations and the OpusHead', () => {
    const { demuxer, out } = demuxAll(stream);
    expect(out.map((p) => p.packet)).toEqual(packets);
    expect(out.every((p) => p.durationMs === 20)).toBe(true);
    expect(demuxer.head).toEqual({ channels: 1, preSkip: 312, inputSampleRate: 24_000 });
  });

  it.each([1, 3, 17, 200, 4096])('reads the stream the same in pieces of %i bytes (pages and packets split across deltas)', (size) => {
    expect(demuxAll(stream, size).out.map((p) => p.packet)).toEqual(packets);
  });

  it('joins a packet laced across two pages', () => {
    const big = tonePackets(1)[0]!;
    const long = new Uint8Array(600);
    long.set(big);
    // 600 bytes: lacing 255, 255 | 90 — the page ends after the second 255 and the next one continues it.
    const serial = 7;
    const head = oggOpusStream([], { inputSampleRate: 48_000, serial });
    const first = oggPage([long.subarray(0, 510)], { serial, sequence: 2, granule: 0, flags: 0 });
    // oggPage ends a packet with a lacing value under 255: 510 bytes gives 255, 255, 0; drop the 0 so the packet goes on.
    const cut = new Uint8Array(first.length - 1);
    cut.set(first.subarray(0, 27));
    cut[26] = 2;
    cut.set([255, 255], 27);
    cut.set(first.subarray(30), 29);
    new DataView(cut.buffer).setUint32(22, oggCrc(cut), true);
    const second = oggPage([long.subarray(510)], { serial, sequence: 3, granule: 960, flags: 1 });
    const bytes = new Uint8Array([...head, ...cut, ...second]);
    const out = demuxAll(bytes).out;
    expect(out).toHaveLength(1);
    expect(out[0]!.packet).toEqual(long);
  });

  it('refuses what is not Ogg, naming why', () => {
    expect(() => new OggOpusDemuxer().push(new TextEncoder().encode('{"detail":"error"}'))).toThrow(/no "OggS"/);
  });

  it('refuses a page whose CRC does not match (a corrupted byte)', () => {
    const bad = stream.slice();
    const [start, end] = pageBounds(bad, 3);
    bad[Math.floor((start + end) / 2)]! ^= 0xff;
    expect(() => demuxAll(bad)).toThrow(/bad CRC/);
  });

  it('refuses a missing page', () => {
    const [start, end] = pageBounds(stream, 3);
    const gap = new Uint8Array([...stream.subarray(0, start), ...stream.subarray(end)]);
    expect(() => demuxAll(gap)).toThrow(/a page is missing/);
  });

  it('refuses a stream cut inside a page, at its end', () => {
    const demuxer = new OggOpusDemuxer();
    demuxer.push(stream.subarray(0, stream.length - 5));
    expect(() => demuxer.end()).toThrow(/ends inside a page/);
  });

  it('refuses a stream that does not begin with OpusHead then OpusTags', () => {
    const noHead = oggPage([new Uint8Array(19)], { serial: 1, sequence: 0, granule: 0, flags: 2 });
    expect(() => new OggOpusDemuxer().push(noHead)).toThrow(/OpusHead/);
    const head = oggOpusStream([], { inputSampleRate: 24_000, serial: 1 });
    const [, afterHead] = pageBounds(head, 0);
    const noTags = new Uint8Array([...head.subarray(0, afterHead), ...oggPage([packets[0]!], { serial: 1, sequence: 1, granule: 0, flags: 0 })]);
    expect(() => new OggOpusDemuxer().push(noTags)).toThrow(/OpusTags/);
  });

  it('refuses a multichannel stream and an interleaved second stream', () => {
    const head = oggOpusStream([], { inputSampleRate: 48_000, serial: 1 });
    const surround = head.slice();
    surround[27 + 1 + 9] = 6; // channel count, inside the OpusHead packet
    new DataView(surround.buffer).setUint32(22, oggCrc(surround.subarray(...pageBounds(surround, 0))), true);
    expect(() => new OggOpusDemuxer().push(surround)).toThrow(/6 channels/);
    const other = oggPage([packets[0]!], { serial: 2, sequence: 2, granule: 0, flags: 0 });
    expect(() => new OggOpusDemuxer().push(new Uint8Array([...head, ...other]))).toThrow(/interleaved/);
  });

  it('refuses an audio packet whose TOC is not 10–60 ms of Opus', () => {
    const head = oggOpusStream([], { inputSampleRate: 48_000, serial: 1 });
    const celt5ms = new Uint8Array([17 << 3, 0, 0]);
    expect(() => new OggOpusDemuxer().push(new Uint8Array([...head, ...oggPage([celt5ms], { serial: 1, sequence: 2, granule: 0, flags: 0 })]))).toThrow(/5 ms/);
  });

  it('never holds more than one page: bytes past a page are parsed as they come', () => {
    expect(MAX_OGG_PAGE_BYTES).toBe(65_307);
    const demuxer = new OggOpusDemuxer();
    // A header claiming the largest page: the demuxer waits for it, and no more.
    const header = new Uint8Array(27 + 255);
    header.set([0x4f, 0x67, 0x67, 0x53]);
    header[26] = 255;
    header.fill(255, 27);
    expect(demuxer.push(header)).toEqual([]);
    expect(() => demuxer.end()).toThrow(OggOpusError);
  });

  it('reads a chained stream (a new first page after the last one) with its own headers', () => {
    const second = oggOpusStream(packets.slice(0, 3), { inputSampleRate: 24_000, serial: 99 });
    const { out } = demuxAll(new Uint8Array([...stream, ...second]));
    expect(out).toHaveLength(packets.length + 3);
  });
});

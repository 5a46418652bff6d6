import { describe, expect, it } from 'vitest';
import { decodeAudioFrame, encodeAudioFrame } from '../../runtime/protocol/frame-header.ts';

describe('reply-audio frame header', () => {
  it('round-trips turn ids (UTF-8), offsets and samples', () => {
    const pcm = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
    for (const [turnId, offset] of [['v1', 0], ['tour-é€😀', 4_294_967_295], ['x'.repeat(255), 48_000]] as const) {
      const bytes = encodeAudioFrame(turnId, offset, pcm);
      expect(bytes.length).toBe(2 + new TextEncoder().encode(turnId).length + 4 + pcm.length * 2);
      expect(decodeAudioFrame(bytes)).toEqual({ turnId, sampleOffset: offset, pcm });
    }
  });

  it('lays the header out as the contract says, little-endian', () => {
    const bytes = encodeAudioFrame('v2', 0x01020304, Int16Array.of(0x0506));
    expect([...bytes]).toEqual([1, 2, 0x76, 0x32, 0x04, 0x03, 0x02, 0x01, 0x06, 0x05]);
  });

  it('decodes a frame at an odd offset inside a larger buffer', () => {
    const frame = encodeAudioFrame('v3', 7, Int16Array.of(-2, 3));
    const big = new Uint8Array(frame.length + 1);
    big.set(frame, 1);
    expect(decodeAudioFrame(big.subarray(1))).toEqual({ turnId: 'v3', sampleOffset: 7, pcm: Int16Array.of(-2, 3) });
  });

  it('rejects bad input with a clear error', () => {
    expect(() => encodeAudioFrame('', 0, new Int16Array())).toThrow(/turnId/);
    expect(() => encodeAudioFrame('é'.repeat(128), 0, new Int16Array())).toThrow(/255/);
    expect(() => encodeAudioFrame('v1', -1, new Int16Array())).toThrow(/sampleOffset/);
    expect(() => encodeAudioFrame('v1', 2 ** 32, new Int16Array())).toThrow(/sampleOffset/);
    expect(() => encodeAudioFrame('v1', 1.5, new Int16Array())).toThrow(/sampleOffset/);
    expect(() => decodeAudioFrame(Uint8Array.of(1))).toThrow(/shorter/);
    expect(() => decodeAudioFrame(Uint8Array.of(2, 1, 0x61, 0, 0, 0, 0))).toThrow(/version/);
    expect(() => decodeAudioFrame(Uint8Array.of(1, 4, 0x61, 0, 0))).toThrow(/shorter/);
    expect(() => decodeAudioFrame(Uint8Array.of(1, 1, 0x61, 0, 0, 0, 0, 9))).toThrow(/odd/);
    expect(() => decodeAudioFrame(Uint8Array.of(1, 1, 0xff, 0, 0, 0, 0))).toThrow(/UTF-8/);
    expect(() => decodeAudioFrame(Uint8Array.of(1, 0, 0, 0, 0, 0))).toThrow(/empty/);
  });
});

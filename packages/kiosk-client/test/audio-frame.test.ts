import { describe, expect, it } from 'vitest';
import { decodeFrameHeader, encodeAudioFrame as runtimeEncode, encodePacketFrame } from '../../../runtime/protocol/frame-header.ts';
import { decodeAudioFrame, encodeAudioFrame, pcmFromBytes, pcmToBytes } from '../src/index.ts';

/** The package's frame codec and the runtime's write and read the same bytes (docs/protocol.md's header). */
describe('reply-audio frame codec', () => {
  it('decodes what the runtime encodes, PCM and Opus packets, UTF-8 turnIds included', () => {
    const pcm = Int16Array.from([0, 1, -1, 32767, -32768]);
    const decoded = decodeAudioFrame(runtimeEncode('tour-é€', 123_456, pcm));
    expect(decoded.ok && [decoded.frame.turnId, decoded.frame.sampleOffset, [...pcmFromBytes(decoded.frame.payload)]]).toEqual(['tour-é€', 123_456, [...pcm]]);
    const packet = Uint8Array.from([0xfc, 0xff, 0xfe]);
    const opus = decodeAudioFrame(encodePacketFrame('v2', 960, packet));
    expect(opus.ok && [...opus.frame.payload]).toEqual([...packet]);
  });

  it('encodes what the runtime decodes', () => {
    const bytes = encodeAudioFrame('v1', 0xffff_ffff, pcmToBytes(Int16Array.from([5, -5])));
    const header = decodeFrameHeader(bytes);
    expect([header.turnId, header.sampleOffset, [...header.payload]]).toEqual(['v1', 0xffff_ffff, [5, 0, 251, 255]]);
  });

  it('refuses to encode a header the protocol cannot carry', () => {
    expect(() => encodeAudioFrame('', 0, new Uint8Array())).toThrow(expect.objectContaining({ code: 'invalid_argument' }) as Error);
    expect(() => encodeAudioFrame('€'.repeat(86), 0, new Uint8Array())).toThrow('1–255 UTF-8 bytes, got 258');
    expect(() => encodeAudioFrame('v1', -1, new Uint8Array())).toThrow('sampleOffset must be an integer');
  });

  it('a malformed frame is an error value, never a throw', () => {
    for (const bytes of [new Uint8Array(), Uint8Array.from([1]), Uint8Array.from([2, 1, 65, 0, 0, 0, 0]), Uint8Array.from([1, 0, 0, 0, 0, 0]), Uint8Array.from([1, 2, 65])]) {
      const decoded = decodeAudioFrame(bytes);
      expect(decoded.ok).toBe(false);
      expect(!decoded.ok && decoded.error.code).toBe('bad_frame');
    }
  });
});

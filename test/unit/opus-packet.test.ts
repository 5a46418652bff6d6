import { describe, expect, it } from 'vitest';
import { MAX_OPUS_PACKET_BYTES, opusPacketInfo } from '../../machines/voice/opus-packet.ts';

// TOC byte: config (5 bits) << 3 | stereo (1 bit) << 2 | frame-count code (2 bits) (RFC 6716 §3.1).
const toc = (config: number, code: number) => (config << 3) | code;

describe('opusPacketInfo', () => {
  it.each([
    ['SILK 20 ms, one frame', [toc(1, 0), 0x55], 20],
    ['SILK 60 ms, one frame', [toc(3, 0), 0x55], 60],
    ['hybrid 10 ms, two equal frames', [toc(12, 1), 1, 2], 20],
    ['CELT 20 ms, one frame', [toc(31, 0)], 20],
    ['CELT 10 ms, two frames of different sizes', [toc(18, 2), 1, 9], 20],
    ['CELT 5 ms, code 3 with 4 frames', [toc(17, 3), 4, 0, 0], 20],
  ])('%s → its duration', (_label, bytes, ms) => {
    expect(opusPacketInfo(Uint8Array.from(bytes))).toEqual({ ok: true, durationMs: ms });
  });

  it.each([
    ['empty', [], 'empty'],
    ['CELT 5 ms: under the 10 ms floor', [toc(17, 0)], '5 ms'],
    ['SILK 60 ms twice: over the 60 ms ceiling', [toc(3, 1), 1, 2], '120 ms'],
    ['two equal frames with an odd payload', [toc(1, 1), 1], 'odd'],
    ['code 2 with no frame length', [toc(1, 2)], 'no frame length'],
    ['code 3 with no frame count', [toc(1, 3)], 'no frame count'],
    ['code 3 with zero frames', [toc(1, 3), 0], 'zero frames'],
  ])('refuses %s, naming why', (_label, bytes, why) => {
    const info = opusPacketInfo(Uint8Array.from(bytes));
    expect(info.ok).toBe(false);
    expect(!info.ok && info.problem).toContain(why);
  });

  it('refuses a packet over its size bound before reading it', () => {
    const big = new Uint8Array(MAX_OPUS_PACKET_BYTES + 1);
    big[0] = toc(1, 0);
    expect(opusPacketInfo(big)).toMatchObject({ ok: false, problem: expect.stringContaining(`${MAX_OPUS_PACKET_BYTES + 1} bytes`) });
  });
});

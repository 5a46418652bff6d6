import { describe, expect, it } from 'vitest';
import { OggOpusError } from '../../machines/voice/ogg-opus.ts';
import { OpusAnswerError, OpusAnswerReader, sniffOpusAnswer } from '../../machines/voice/opus-answer.ts';
import { oggOpusStream } from '../support/ogg-opus-writer.ts';

/** One SILK wideband 20 ms frame (TOC config 9, one frame): a well-formed packet header. */
const PACKET = Uint8Array.of(0x48, 1, 2, 3, 4, 5);
const ascii = (text: string) => new TextEncoder().encode(text);
const accepts = () => true;

describe('the container of an opus answer, told from its first delta', () => {
  it.each([
    ['an Ogg page', oggOpusStream([PACKET], { inputSampleRate: 24_000 }), 'ogg'],
    ['a raw Opus packet', PACKET, 'packets'],
    ['a bare OpusHead (raw packets with their headers)', ascii('OpusHead\u0001\u0001'), 'packets'],
    ['a WAV file', ascii('RIFF....WAVEfmt '), 'other'],
    ['an MP3 with its ID3 tag', ascii('ID3\u0004\u0000'), 'other'],
    // 0xff 0xe1 would read as one 20 ms CELT frame: the MPEG sync is told first.
    ['an MP3 frame', Uint8Array.of(0xff, 0xe1, 0x10, 0x00), 'other'],
    ['FLAC', ascii('fLaC'), 'other'],
    ['100 ms of float32 PCM (over any packet’s size)', new Uint8Array(9_600), 'other'],
    ['a TOC of 120 ms', Uint8Array.of(0x19, 1, 2), 'other'],
  ] as const)('%s → %s', (_, first, kind) => {
    expect(sniffOpusAnswer(first, accepts)).toBe(kind);
  });

  it('a packet the decoder refuses is not taken for Opus, however its TOC reads', () => {
    expect(sniffOpusAnswer(PACKET, () => false)).toBe('other');
  });
});

describe('OpusAnswerReader', () => {
  it('takes raw packets one a delta, with their TOC’s duration, skipping bare headers; a later delta that is no packet is an error', () => {
    const reader = new OpusAnswerReader(accepts);
    expect(reader.push(ascii('OpusHead\u0001\u0001'))).toEqual([]);
    expect(reader.push(new Uint8Array(0))).toEqual([]);
    expect(reader.push(PACKET)).toEqual([{ packet: PACKET, durationMs: 20 }]);
    expect(reader.kind).toBe('packets');
    expect(() => reader.push(Uint8Array.of(0x19, 1, 2))).toThrow(OpusAnswerError);
  });

  it('demuxes an Ogg stream cut anywhere, and an Ogg stream cut short is an error at its end', () => {
    const ogg = oggOpusStream([PACKET, PACKET], { inputSampleRate: 24_000 });
    const reader = new OpusAnswerReader(accepts);
    const packets = [...reader.push(ogg.subarray(0, 50)), ...reader.push(ogg.subarray(50))];
    expect(packets.map((p) => p.durationMs)).toEqual([20, 20]);
    expect(() => reader.end()).not.toThrow();
    const cut = new OpusAnswerReader(accepts);
    cut.push(ogg.subarray(0, ogg.length - 3));
    expect(() => cut.end()).toThrow(OggOpusError);
  });

  it('gives nothing for another container, and an answer with no audio at all is an error at its end', () => {
    const other = new OpusAnswerReader(accepts);
    expect(other.push(ascii('ID3 not an Ogg stream'))).toEqual([]);
    expect(other.kind).toBe('other');
    expect(() => new OpusAnswerReader(accepts).end()).toThrow(new OpusAnswerError('the answer carried no audio'));
  });
});

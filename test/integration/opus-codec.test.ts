import { beforeAll, describe, expect, it } from 'vitest';
import { OPUS_FRAME_MS, opusCodec } from '../../adapters/voice/opus-codec.ts';
import { opusPacketInfo } from '../../machines/voice/opus-packet.ts';
import type { OpusDecoderPort, OpusEncoderPort } from '../../machines/voice/voice.port.ts';
import { alignedSnrDb, voicedSound } from '../support/audio-quality.ts';
import { concat, frenchSpeech } from '../support/speech.ts';

/**
 * Opus is perceptual: waveform SNR understates how it sounds, but a broken codec path (wrong rate,
 * byte order, a dropped or repeated packet) lands far below these bounds, near 0 dB.
 */
const MIN_SNR_DB = 8;
/** The search for the codec's delay: 40 ms at the rate compared, well over Opus's lookahead. */
const lagAt = (rate: number) => (rate * 40) / 1000;

function roundTrip(encoder: OpusEncoderPort, decoder: OpusDecoderPort, pcm: Int16Array): { decoded: Int16Array; bytes: number; packets: Uint8Array[] } {
  const packets: Uint8Array[] = [];
  for (let at = 0; at + encoder.frameSamples <= pcm.length; at += encoder.frameSamples) packets.push(encoder.encode(pcm.subarray(at, at + encoder.frameSamples)));
  const decoded = concat(packets.map((p) => decoder.decode(p)));
  return { decoded, bytes: packets.reduce((n, p) => n + p.length, 0), packets };
}

describe('the Opus codec adapter (libopus in WASM)', () => {
  const codec = opusCodec();
  let speech: Int16Array;

  beforeAll(async () => {
    speech = await frenchSpeech('Je suis allée au marché ce matin avec ma fille, il faisait beau.');
  }, 30_000);

  it('round-trips espeak-ng speech at 16 kHz (the microphone path) within the SNR bound, at under 1/8 of PCM’s bytes', () => {
    const encoder = codec.encoder(16_000);
    const decoder = codec.decoder();
    const { decoded, bytes, packets } = roundTrip(encoder, decoder, speech);
    expect(decoded.length).toBe(packets.length * encoder.frameSamples);
    const { snrDb } = alignedSnrDb(speech.subarray(0, decoded.length - lagAt(16_000)), decoded, lagAt(16_000));
    expect(snrDb).toBeGreaterThan(MIN_SNR_DB);
    expect(bytes * 8).toBeLessThan(decoded.length * 2);
    // Every packet the encoder makes is one the gateway's pre-check admits, as 20 ms.
    expect(packets.every((p) => opusPacketInfo(p).ok && (opusPacketInfo(p) as { durationMs: number }).durationMs === OPUS_FRAME_MS)).toBe(true);
    encoder.close();
    decoder.close();
  });

  it.each([16_000, 24_000, 48_000])('round-trips speech-like audio at %i Hz (the reply path) within the SNR bound', (rate) => {
    const pcm = voicedSound(rate, 2000);
    const encoder = codec.encoder(rate);
    const decoder = codec.decoder(rate);
    const { decoded, bytes } = roundTrip(encoder, decoder, pcm);
    const { snrDb } = alignedSnrDb(pcm.subarray(0, decoded.length - lagAt(rate)), decoded, lagAt(rate));
    expect(snrDb).toBeGreaterThan(MIN_SNR_DB);
    // 24 kbit/s for two seconds, give or take the encoder's rate control.
    expect(bytes).toBeLessThan((24_000 / 8) * 2 * 1.25);
    encoder.close();
    decoder.close();
  });

  it('refuses a malformed packet with a RangeError and decodes the next good one', () => {
    const encoder = codec.encoder(16_000);
    const decoder = codec.decoder();
    const good = encoder.encode(voicedSound(16_000, 20));
    for (const bad of [new Uint8Array(0), Uint8Array.of(0xff, 0xff, 0xff), Uint8Array.of(0x0b, 0xff, 0xff, 1, 2, 3)]) expect(() => decoder.decode(bad)).toThrow(RangeError);
    expect(decoder.decode(good)).toHaveLength(320);
    expect(() => encoder.encode(new Int16Array(100))).toThrow(/320 samples/);
    encoder.close();
    decoder.close();
  });

  it('a closed encoder or decoder throws instead of touching freed memory; closing twice is harmless', () => {
    const encoder = codec.encoder(24_000);
    const decoder = codec.decoder();
    const packet = encoder.encode(new Int16Array(480));
    encoder.close();
    decoder.close();
    encoder.close();
    decoder.close();
    expect(() => encoder.encode(new Int16Array(480))).toThrow(/closed/);
    expect(() => decoder.decode(packet)).toThrow(/closed/);
  });

  it('refuses rates Opus does not have', () => {
    expect(() => codec.encoder(44_100)).toThrow(/44100 Hz/);
    expect(() => codec.decoder(22_050)).toThrow(/22050 Hz/);
  });
});

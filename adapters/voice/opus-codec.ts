import { Decoder, Encoder } from '@evan/opus/wasm/index.mjs';
import { INPUT_SAMPLE_RATE, type OpusCodecPort, type OpusDecoderPort, type OpusEncoderPort } from '../../machines/voice/voice.port.ts';

/**
 * Opus through libopus compiled to WASM (`@evan/opus`'s WASM entry, SIMD where the engine has it): no
 * native build, no download, the same code on every machine. Each encoder and decoder owns its state
 * in the module's memory until `close()` frees it (a finalizer is only the package's backstop).
 */

/** Reply speech: 24 kbit/s is what WebRTC sends for wideband voice, well under PCM's 384–768 kbit/s. */
export const OPUS_REPLY_BITRATE = 24_000;
/**
 * libopus's effort (0–10), OPUS_COMPLEXITY's default. The reply's encoding is an Opus session's main
 * cost; bench:opus measures each setting's CPU and round-trip SNR (docs/benchmarks.md).
 */
export const OPUS_COMPLEXITY = 3;
export const OPUS_FRAME_MS = 20;
/** libopus's largest frame is 120 ms at 48 kHz; its output buffer holds that much. */
const MAX_DECODED_SAMPLES = 5760;

const OPUS_RATES = [8000, 12000, 16000, 24000, 48000] as const;
type OpusRate = (typeof OPUS_RATES)[number];

// libopus's CTL requests (opus_defines.h).
const SET_BITRATE = 4002;
const SET_COMPLEXITY = 4010;
const SET_SIGNAL = 4024;
const SIGNAL_VOICE = 3001;

/** `onEncoded`: the seconds of audio each packet encoded carried (kohami_opus_encoded_seconds_total). */
export function opusCodec(options: { bitrate?: number; complexity?: number; onEncoded?: (seconds: number) => void } = {}): OpusCodecPort {
  const bitrate = options.bitrate ?? OPUS_REPLY_BITRATE;
  const complexity = options.complexity ?? OPUS_COMPLEXITY;
  return {
    decoder: (sampleRate = INPUT_SAMPLE_RATE) => new OpusDecoder(opusRate(sampleRate)),
    encoder: (sampleRate) => new OpusEncoder(sampleRate, bitrate, complexity, options.onEncoded),
  };
}

function opusRate(sampleRate: number): OpusRate {
  if (!(OPUS_RATES as readonly number[]).includes(sampleRate)) throw new RangeError(`opus: ${sampleRate} Hz is not an Opus rate (${OPUS_RATES.join(', ')})`);
  return sampleRate as OpusRate;
}

class OpusDecoder implements OpusDecoderPort {
  private codec: Decoder | null;

  constructor(sampleRate: OpusRate) {
    this.codec = new Decoder({ channels: 1, sample_rate: sampleRate });
  }

  decode(packet: Uint8Array): Int16Array {
    if (!this.codec) throw new Error('opus decoder: closed');
    // An empty packet would be decoded as a lost one (concealment): it is not a packet.
    if (packet.length === 0) throw new RangeError('opus: empty packet');
    let bytes: Uint8Array;
    try {
      bytes = this.codec.decode(packet);
    } catch (err) {
      throw new RangeError(`opus: ${err instanceof Error ? err.message.replace(/^opus: /, '') : String(err)}`);
    }
    if (bytes.length > MAX_DECODED_SAMPLES * 2) throw new RangeError('opus: packet decodes to more than 120 ms');
    // A fresh copy from the package, at offset 0: viewed in place.
    return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  }

  close(): void {
    this.codec?.drop();
    this.codec = null;
  }
}

class OpusEncoder implements OpusEncoderPort {
  readonly sampleRate: number;
  readonly frameSamples: number;
  private codec: Encoder | null;
  private readonly onEncoded: ((seconds: number) => void) | undefined;

  constructor(sampleRate: number, bitrate: number, complexity: number, onEncoded?: (seconds: number) => void) {
    this.sampleRate = sampleRate;
    this.onEncoded = onEncoded;
    this.frameSamples = (sampleRate * OPUS_FRAME_MS) / 1000;
    const codec = new Encoder({ channels: 1, sample_rate: opusRate(sampleRate), application: 'voip' });
    try {
      codec.ctl(SET_BITRATE, bitrate);
      codec.ctl(SET_COMPLEXITY, complexity);
      codec.ctl(SET_SIGNAL, SIGNAL_VOICE);
    } catch (err) {
      codec.drop();
      throw err;
    }
    this.codec = codec;
  }

  encode(frame: Int16Array): Uint8Array {
    if (!this.codec) throw new Error('opus encoder: closed');
    if (frame.length !== this.frameSamples) throw new RangeError(`opus encoder: a frame is ${this.frameSamples} samples, got ${frame.length}`);
    const packet = this.codec.encode(frame);
    this.onEncoded?.(OPUS_FRAME_MS / 1000);
    return packet;
  }

  close(): void {
    this.codec?.drop();
    this.codec = null;
  }
}

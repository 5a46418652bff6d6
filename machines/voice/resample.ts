import { SincResampler } from './sinc-resampler.js';

/**
 * Sample-format and sample-rate conversion between the rates voice mode meets: 16 kHz (microphone,
 * recognizer), 22.05 kHz (espeak-ng), 24 kHz (Voxtral speech) and 48 kHz (browsers).
 *
 * The rate conversion is sinc-resampler.js's windowed-sinc low-pass, the same file the kiosk page's
 * microphone worklet runs: nothing above the new Nyquist folds back (≥ 80 dB down), the pass band is
 * flat to 7/16 of the lower rate. Streamed: the filter's state is carried across chunks, so a
 * sentence synthesized in many chunks resamples to the same samples as the whole; `flush` ends it,
 * giving exactly ceil(n·to/from) samples for n in (no drift between produced and played audio).
 */

export const VOICE_SAMPLE_RATES = [16_000, 22_050, 24_000, 48_000] as const;

export class Resampler {
  private readonly core: SincResampler;
  readonly fromRate: number;
  readonly toRate: number;

  constructor(fromRate: number, toRate: number) {
    this.core = new SincResampler(fromRate, toRate);
    this.fromRate = fromRate;
    this.toRate = toRate;
  }

  /** The samples the next chunk completes: each output waits for the few milliseconds of input after it. */
  push(input: Int16Array): Int16Array {
    if (this.fromRate === this.toRate) return input.slice();
    const output = new Float64Array(this.core.maxOutput(input.length));
    return toS16(output, this.core.process(input, output));
  }

  /** The stream's end: the samples still held, as if silence followed. The resampler is then ready for a new stream. */
  flush(): Int16Array {
    const output = new Float64Array(this.core.maxFlush());
    return toS16(output, this.core.flush(output));
  }
}

/** The filter's overshoot near full scale is clipped, not wrapped around (an Int16Array store would wrap). */
function toS16(samples: Float64Array, count: number): Int16Array {
  const output = new Int16Array(count);
  for (let i = 0; i < count; i++) output[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i]!)));
  return output;
}

/** One-shot conversion of a whole buffer: ceil(n·to/from) samples. */
export function resample(input: Int16Array, fromRate: number, toRate: number): Int16Array {
  const resampler = new Resampler(fromRate, toRate);
  const body = resampler.push(input);
  const tail = resampler.flush();
  const output = new Int16Array(body.length + tail.length);
  output.set(body);
  output.set(tail, body.length);
  return output;
}

/** Float samples in [−1, 1] (Voxtral's `pcm` format) to s16, clipped. */
export function float32ToS16(input: Float32Array): Int16Array {
  const output = new Int16Array(input.length);
  for (let i = 0; i < input.length; i++) output[i] = floatToS16(input[i]!);
  return output;
}

function floatToS16(x: number): number {
  const sample = Math.max(-1, Math.min(1, x));
  return sample < 0 ? Math.round(sample * 32768) : Math.round(sample * 32767);
}

/**
 * Streamed little-endian float32 bytes (Voxtral's `pcm`, base64 in server-sent events) to s16, read
 * where they lie: no concatenation, no aligned copy. A sample split across two chunks waits in a
 * 4-byte carry for the rest of its bytes.
 */
export class Float32LeDecoder {
  private readonly carry = new Uint8Array(4);
  private readonly carryView = new DataView(this.carry.buffer);
  private carried = 0;

  push(bytes: Uint8Array): Int16Array {
    const output = new Int16Array((this.carried + bytes.length) >>> 2);
    let n = 0;
    let at = 0;
    if (this.carried > 0) {
      at = Math.min(4 - this.carried, bytes.length);
      this.carry.set(bytes.subarray(0, at), this.carried);
      this.carried += at;
      if (this.carried < 4) return output;
      output[n++] = floatToS16(this.carryView.getFloat32(0, true));
      this.carried = 0;
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (; at + 4 <= bytes.length; at += 4) output[n++] = floatToS16(view.getFloat32(at, true));
    this.carry.set(bytes.subarray(at), 0);
    this.carried = bytes.length - at;
    return output;
  }
}

/** s16 to floats in [−1, 1), as neural models take them. */
export function s16ToFloat32(input: Int16Array, output = new Float32Array(input.length)): Float32Array {
  for (let i = 0; i < input.length; i++) output[i] = input[i]! / 32768;
  return output;
}

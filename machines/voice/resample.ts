/**
 * Sample-format and sample-rate conversion between the rates voice mode meets: 16 kHz (microphone,
 * recognizer), 22.05 kHz (espeak-ng), 24 kHz (Voxtral speech) and 48 kHz (browsers).
 *
 * Linear interpolation, streamed: the resampler carries its fractional position and last sample
 * across chunks, so a sentence synthesized in many chunks resamples to exactly the length of the
 * whole (no clicks at chunk edges, no drift between produced and played audio).
 */

export const VOICE_SAMPLE_RATES = [16_000, 22_050, 24_000, 48_000] as const;

export class Resampler {
  /** Input position (in input samples, relative to the next chunk's first sample) of the next output sample. */
  private position = 0;
  /** The last input sample of the previous chunk: position −1 of the next chunk. */
  private previous: number | null = null;
  private readonly step: number;

  readonly fromRate: number;
  readonly toRate: number;

  constructor(
    fromRate: number,
    toRate: number,
  ) {
    this.fromRate = fromRate;
    this.toRate = toRate;
    for (const rate of [fromRate, toRate]) {
      if (!Number.isInteger(rate) || rate < 8_000 || rate > 192_000) throw new RangeError(`resample: unsupported sample rate ${rate}`);
    }
    this.step = fromRate / toRate;
  }

  push(input: Int16Array): Int16Array {
    if (this.fromRate === this.toRate) return input.slice();
    if (input.length === 0) return new Int16Array(0);
    // Positions are relative to input[0]; the previous chunk's last sample sits at −1.
    let position = this.position;
    if (this.previous === null) {
      this.previous = input[0]!;
      position = Math.max(position, 0);
    }
    let count = Math.max(0, Math.ceil((input.length - 1 - position) / this.step));
    // Rounding may admit one position at the last sample, which has no right neighbour yet.
    while (count > 0 && position + (count - 1) * this.step >= input.length - 1) count--;
    const output = new Int16Array(count);
    for (let n = 0; n < count; n++) {
      const at = position + n * this.step;
      const base = Math.floor(at);
      const fraction = at - base;
      const left = base < 0 ? this.previous : input[base]!;
      const right = input[base + 1]!;
      output[n] = Math.round(left + (right - left) * fraction);
    }
    this.position = position + count * this.step - input.length;
    this.previous = input[input.length - 1]!;
    return output;
  }
}

/** One-shot conversion of a whole buffer. */
export function resample(input: Int16Array, fromRate: number, toRate: number): Int16Array {
  const resampler = new Resampler(fromRate, toRate);
  const body = resampler.push(input);
  const last = input[input.length - 1];
  if (fromRate === toRate || last === undefined) return body;
  // The final partial interval holds output samples past the last input pair: hold the last sample.
  const expected = Math.round((input.length * toRate) / fromRate);
  const output = new Int16Array(expected);
  output.set(body.subarray(0, expected));
  output.fill(last, Math.min(body.length, expected));
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

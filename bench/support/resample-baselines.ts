/**
 * The two resamplers the shared sinc resampler replaced, kept as bench:resample's baselines (as they
 * were in machines/voice/resample.ts and runtime/kiosk/page/audio-worklet.js), on float samples.
 */

/** The server's: linear interpolation, streamed (fractional position and last sample carried). */
export class LinearBaseline {
  private position = 0;
  private previous: number | null = null;
  private readonly step: number;

  constructor(fromRate: number, toRate: number) {
    this.step = fromRate / toRate;
  }

  push(input: Float64Array): Float64Array {
    if (input.length === 0) return new Float64Array(0);
    let position = this.position;
    if (this.previous === null) {
      this.previous = input[0]!;
      position = Math.max(position, 0);
    }
    let count = Math.max(0, Math.ceil((input.length - 1 - position) / this.step));
    while (count > 0 && position + (count - 1) * this.step >= input.length - 1) count--;
    const output = new Float64Array(count);
    for (let n = 0; n < count; n++) {
      const at = position + n * this.step;
      const base = Math.floor(at);
      const fraction = at - base;
      const left = base < 0 ? this.previous : input[base]!;
      const right = input[base + 1]!;
      output[n] = left + (right - left) * fraction;
    }
    this.position = position + count * this.step - input.length;
    this.previous = input[input.length - 1]!;
    return output;
  }
}

/** The page's Firefox fallback: each output averages the input span it covers (a box filter). */
export class BoxBaseline {
  private position = 0;
  private pending = new Float64Array(0);
  private readonly step: number;

  constructor(fromRate: number, toRate: number) {
    this.step = fromRate / toRate;
  }

  push(channel: Float64Array): Float64Array {
    const input = new Float64Array(this.pending.length + channel.length);
    input.set(this.pending);
    input.set(channel, this.pending.length);
    const output = new Float64Array(Math.ceil(input.length / this.step) + 1);
    let written = 0;
    while (this.position + this.step <= input.length) {
      const from = Math.floor(this.position);
      const to = Math.floor(this.position + this.step);
      let sum = 0;
      for (let i = from; i < to; i++) sum += input[i]!;
      output[written++] = to > from ? sum / (to - from) : input[from]!;
      this.position += this.step;
    }
    const kept = Math.floor(this.position);
    this.pending = input.slice(kept);
    this.position -= kept;
    return output.subarray(0, written);
  }
}

// @ts-check
/**
 * The one sample-rate converter of the project, shared as-is by the server (machines/voice/resample.ts
 * wraps it for s16 PCM) and by the browser kiosk's microphone worklet (served at
 * /kiosk/client/browser/sinc-resampler.js): plain JavaScript with JSDoc types, so that the page loads the very file
 * the server runs, with no build step. It imports nothing (machines/ stays pure; a worklet has no
 * module resolution beyond relative URLs).
 *
 * A polyphase windowed-sinc low-pass (Kaiser window) at the rational ratio to/from = L/M: output n
 * sits at input position n·M/L and is a dot product of the 2H inputs around it with one of L phases of
 * the prototype filter. The pass band ends at 7/16 of the lower rate's band (7 kHz at 16 kHz), the
 * stop band starts at its Nyquist, and the window is designed for 90 dB there: anything above the new
 * Nyquist is removed instead of folding back into speech (linear interpolation let a 10 kHz tone
 * through at −2.7 dB, the old worklet's box filter at −5.9 dB).
 *
 * Streaming: the last 2H inputs are carried across chunks, so the output does not depend on how the
 * input was cut. Output n is aligned with input time n/to (no delay in the stream's timeline): it
 * comes out once the H inputs after it have arrived, and `flush` ends the stream as if silence
 * followed, so a stream of N inputs gives exactly ceil(N·L/M) outputs. Memory is bounded: a shared
 * table per rate pair (at most MAX_TABLE coefficients) and a buffer of 2H + BLOCK samples.
 */

/** Stop-band attenuation the Kaiser window is designed for, in dB (the target is ≥ 80 dB above the new Nyquist). */
const ATTENUATION_DB = 90;
/** The pass band's edge and the stop band's, as fractions of the lower rate. */
const PASS_EDGE = 7 / 16;
const STOP_EDGE = 1 / 2;
/** Input samples buffered per round: the buffer is 2H + BLOCK long whatever the chunk size. */
const BLOCK = 2048;
/** The largest phase table accepted (coefficients): rates with an unwieldy ratio are refused, not built. */
const MAX_TABLE = 1 << 17;
/** Tables kept for reuse (one per rate pair; a resampler is made per sentence). */
const MAX_CACHED_TABLES = 16;

/** @typedef {{ up: number, down: number, half: number, taps: number, coefficients: Float64Array }} PhaseTable */

/** @type {Map<string, PhaseTable>} */
const tables = new Map();

/** @param {number} a @param {number} b @returns {number} */
function gcd(a, b) {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The modified Bessel function of the first kind, order 0 (its series converges fast for the β used here). @param {number} x */
function besselI0(x) {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 64 && term > sum * 1e-17; k++) {
    term *= q / (k * k);
    sum += term;
  }
  return sum;
}

/** @param {number} fromRate @param {number} toRate @returns {PhaseTable} */
function phaseTable(fromRate, toRate) {
  const key = `${fromRate}:${toRate}`;
  const cached = tables.get(key);
  if (cached) return cached;
  const g = gcd(fromRate, toRate);
  const up = toRate / g;
  const down = fromRate / g;
  const lower = Math.min(fromRate, toRate);
  // Kaiser's estimates: the shape β for the attenuation, the length for the transition band.
  const beta = 0.1102 * (ATTENUATION_DB - 8.7);
  const transition = (2 * Math.PI * (STOP_EDGE - PASS_EDGE) * lower) / fromRate; // rad per input sample
  const length = (ATTENUATION_DB - 7.95) / (2.285 * transition);
  const half = Math.ceil(length / 2);
  const taps = 2 * half;
  if (up * taps > MAX_TABLE) throw new RangeError(`resample: ${fromRate} → ${toRate} Hz needs a ${up}-phase filter, beyond the ${MAX_TABLE}-coefficient bound`);
  const cutoff = (((PASS_EDGE + STOP_EDGE) / 2) * lower) / fromRate; // cycles per input sample
  const i0Beta = besselI0(beta);
  const coefficients = new Float64Array(up * taps);
  for (let p = 0; p < up; p++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      // Distance, in input samples, from output position i0 + p/up to input i0 − half + 1 + k.
      const d = p / up + half - 1 - k;
      const r = d / half;
      const window = r * r < 1 ? besselI0(beta * Math.sqrt(1 - r * r)) / i0Beta : 0;
      const x = 2 * cutoff * d;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
      const c = 2 * cutoff * sinc * window;
      coefficients[p * taps + k] = c;
      sum += c;
    }
    // Each phase passes DC at exactly unity: no ripple at the output rate on a constant signal.
    for (let k = 0; k < taps; k++) coefficients[p * taps + k] = /** @type {number} */ (coefficients[p * taps + k]) / sum;
  }
  const table = { up, down, half, taps, coefficients };
  if (tables.size >= MAX_CACHED_TABLES) tables.delete(/** @type {string} */ (tables.keys().next().value));
  tables.set(key, table);
  return table;
}

export class SincResampler {
  /** @readonly */ fromRate;
  /** @readonly */ toRate;
  /** @type {PhaseTable | null} null when both rates are equal: samples pass through. */
  #table;
  /** @type {Float64Array} */
  #buffer;
  /** Valid samples in the buffer. */
  #filled = 0;
  /** Buffer index of the input at or just before the next output's position. */
  #position = 0;
  /** The next output's phase: its position is #position + #phase/up. */
  #phase = 0;
  /** Samples dropped from the buffer's front since the reset: buffer index i is stream index #dropped + i. */
  #dropped = 0;

  /** @param {number} fromRate @param {number} toRate */
  constructor(fromRate, toRate) {
    for (const rate of [fromRate, toRate]) {
      if (!Number.isInteger(rate) || rate < 8000 || rate > 192000) throw new RangeError(`resample: unsupported sample rate ${rate}`);
    }
    this.fromRate = fromRate;
    this.toRate = toRate;
    this.#table = fromRate === toRate ? null : phaseTable(fromRate, toRate);
    this.#buffer = new Float64Array(this.#table ? this.#table.taps + BLOCK : 0);
    this.reset();
  }

  /** Forgets the stream: the next input starts a new one (as if preceded by silence). */
  reset() {
    this.#buffer.fill(0);
    // The H − 1 inputs before the first are silence: output 0 sits on input 0.
    this.#filled = this.#table ? this.#table.half - 1 : 0;
    this.#position = this.#filled;
    this.#phase = 0;
    this.#dropped = 0;
  }

  /** The most samples `process` may write for an input of this length (size an output buffer once with it). @param {number} inputLength */
  maxOutput(inputLength) {
    const t = this.#table;
    if (!t) return inputLength;
    return Math.ceil(((this.#filled - this.#position + inputLength + 1) * t.up) / t.down) + 1;
  }

  /**
   * Takes the next inputs and writes the outputs they complete at the start of `output` (at least
   * `maxOutput(input.length)` long).
   * @param {ArrayLike<number>} input
   * @param {Float32Array | Float64Array} output
   * @returns {number} how many samples were written
   */
  process(input, output) {
    const t = this.#table;
    if (!t) {
      for (let i = 0; i < input.length; i++) output[i] = /** @type {number} */ (input[i]);
      return input.length;
    }
    let written = 0;
    for (let at = 0; at < input.length; ) {
      const take = Math.min(this.#buffer.length - this.#filled, input.length - at);
      for (let i = 0; i < take; i++) this.#buffer[this.#filled + i] = /** @type {number} */ (input[at + i]);
      this.#filled += take;
      at += take;
      written = this.#run(output, written, Infinity);
    }
    return written;
  }

  /** The most samples `flush` may write. */
  maxFlush() {
    const t = this.#table;
    return t ? Math.ceil(((this.#filled - this.#position) * t.up) / t.down) + 1 : 0;
  }

  /**
   * Ends the stream: writes the outputs still waiting for the inputs after them, as if silence
   * followed (a stream of N inputs gives ceil(N·to/from) outputs in all), then resets.
   * @param {Float32Array | Float64Array} output at least `maxFlush()` long
   * @returns {number} how many samples were written
   */
  flush(output) {
    let written = 0;
    if (this.#table) {
      // Just past the last real input (counted from the stream's start): outputs from there on are past its end.
      const end = this.#dropped + this.#filled;
      while (this.#dropped + this.#position < end) {
        this.#buffer.fill(0, this.#filled);
        this.#filled = this.#buffer.length;
        written = this.#run(output, written, end - this.#dropped);
      }
    }
    this.reset();
    return written;
  }

  /**
   * Computes every output whose window is in the buffer and whose position is before `end`, then
   * drops the inputs no later output needs.
   * @param {Float32Array | Float64Array} output @param {number} written @param {number} end
   */
  #run(output, written, end) {
    const t = /** @type {PhaseTable} */ (this.#table);
    const { up, down, half, taps, coefficients } = t;
    const buffer = this.#buffer;
    let position = this.#position;
    let phase = this.#phase;
    while (position + half < this.#filled && position < end) {
      const start = position - half + 1;
      const offset = phase * taps;
      // The hot loop (taps is even): two sums, so the multiply-adds of neighbours do not wait on each other.
      let even = 0;
      let odd = 0;
      for (let k = 0; k < taps; k += 2) {
        even += /** @type {number} */ (coefficients[offset + k]) * /** @type {number} */ (buffer[start + k]);
        odd += /** @type {number} */ (coefficients[offset + k + 1]) * /** @type {number} */ (buffer[start + k + 1]);
      }
      output[written++] = even + odd;
      phase += down;
      position += Math.floor(phase / up);
      phase %= up;
    }
    const keep = Math.min(position - half + 1, this.#filled);
    if (keep > 0) {
      buffer.copyWithin(0, keep, this.#filled);
      this.#filled -= keep;
      this.#dropped += keep;
      position -= keep;
    }
    this.#position = position;
    this.#phase = phase;
    return written;
  }
}

import { describe, expect, it } from 'vitest';
import { float32ToS16, resample, Resampler, s16ToFloat32 } from '../../machines/voice/resample.ts';
import { SincResampler } from '../../machines/voice/sinc-resampler.js';

/** Loud (−6 dBFS) so that the s16 rounding floor (≈ −92 dB of it) stays below what is measured. */
const AMPLITUDE = 16_000;
const sine = (rate: number, hz: number, length = rate) => Float64Array.from({ length }, (_, i) => AMPLITUDE * Math.sin((2 * Math.PI * hz * i) / rate));
const tone = (rate: number, hz: number, length = rate) => Int16Array.from(sine(rate, hz, length), Math.round);
/** The filter's start and end transients (a tone switched on and off) are left out of every level. */
const EDGE = 400;
const rms = (x: ArrayLike<number>) => {
  let sum = 0;
  for (let i = EDGE; i < x.length - EDGE; i++) sum += x[i]! ** 2;
  return Math.sqrt(sum / (x.length - 2 * EDGE));
};
const db = (ratio: number) => 20 * Math.log10(ratio);

const DOWN_TO_16K = [48_000, 44_100, 24_000, 22_050] as const;
/** Every pair of the rates voice mode meets (docs/protocol.md, the speakers, browser contexts). */
const RATES = [8_000, 16_000, 22_050, 24_000, 44_100, 48_000] as const;
const PAIRS = RATES.flatMap((from) => RATES.filter((to) => to !== from).map((to) => [from, to] as const));

describe('the resampler (windowed sinc, shared with the kiosk page)', () => {
  it('removes a 10 kHz tone on the way to 16 kHz (≤ −80 dB), and everything else above 8 kHz', () => {
    for (const from of DOWN_TO_16K) {
      for (const hz of [8_100, 9_000, 10_000, 11_025, 0.45 * from]) {
        if (hz >= from / 2) continue;
        const level = db(rms(resample(tone(from, hz), from, 16_000)) / rms(tone(from, hz)));
        expect(level, `${hz} Hz, ${from} → 16000`).toBeLessThanOrEqual(-80);
      }
    }
  });

  it('is flat within 0.1 dB up to 7 kHz at 16 kHz', () => {
    for (const from of DOWN_TO_16K) {
      for (let hz = 100; hz <= 7_000; hz += 300) {
        const level = db(rms(resample(tone(from, hz), from, 16_000)) / rms(tone(from, hz)));
        expect(Math.abs(level), `${hz} Hz, ${from} → 16000`).toBeLessThan(0.1);
      }
    }
  });

  it('keeps the waveform between every pair of rates, in time (no delay), with no image (error ≤ −80 dB)', () => {
    for (const [from, to] of PAIRS) {
      const lower = Math.min(from, to);
      for (const hz of [1_000 * (lower / 16_000), (7 / 16) * lower]) {
        const out = resample(tone(from, hz), from, to);
        expect(out.length, `${from} → ${to}`).toBe(to);
        const expected = sine(to, hz);
        const error = db(rms(out.map((s, i) => s - expected[i]!)) / rms(expected));
        expect(error, `${hz} Hz, ${from} → ${to}`).toBeLessThanOrEqual(-80);
      }
    }
  });

  it('gives the same samples however the stream is cut, ceil(n·to/from) of them once flushed, and joins chunks without a seam', () => {
    for (const [from, to] of [[22_050, 24_000], [22_050, 16_000], [48_000, 16_000], [16_000, 48_000]] as const) {
      const input = tone(from, 440, 2 * from + 17);
      const whole = resample(input, from, to);
      expect(whole.length).toBe(Math.ceil((input.length * to) / from));
      // Sizes below and above the resampler's internal block (2048), a render quantum (128), single samples.
      for (const sizes of [[1], [128], [997], [5_000], [1, 2, 3, 300, 4_099, 7]]) {
        const resampler = new Resampler(from, to);
        const parts: number[] = [];
        for (let at = 0, i = 0; at < input.length; i++) {
          const size = sizes[i % sizes.length]!;
          parts.push(...resampler.push(input.subarray(at, at + size)));
          at += size;
        }
        parts.push(...resampler.flush());
        expect(Int16Array.from(parts), `${from} → ${to} in chunks of ${sizes.join(', ')}`).toEqual(whole);
      }
      // A 440 Hz tone moves at most 2π·440/to of its amplitude per sample: no step (the tone's own on and off are left out).
      const slope = ((2 * Math.PI * 440) / to) * AMPLITUDE;
      for (let i = EDGE; i < whole.length - EDGE; i++) expect(Math.abs(whole[i]! - whole[i - 1]!)).toBeLessThanOrEqual(slope * 1.01 + 1);
    }
  });

  it('starts afresh after a flush, passes a constant through unchanged, and clips instead of wrapping', () => {
    const resampler = new Resampler(24_000, 16_000);
    const first = [...resampler.push(tone(24_000, 300, 4_800)), ...resampler.flush()];
    const second = [...resampler.push(tone(24_000, 300, 4_800)), ...resampler.flush()];
    expect(second).toEqual(first);
    const constant = resample(new Int16Array(4_800).fill(1_234), 24_000, 16_000);
    expect(constant.subarray(EDGE, -EDGE).every((s) => s === 1_234)).toBe(true);
    // A full-scale square wave overshoots (Gibbs): the overshoot clips at the s16 bounds.
    const square = Int16Array.from({ length: 4_800 }, (_, i) => (Math.floor(i / 60) % 2 ? 32_767 : -32_768));
    const out = resample(square, 48_000, 16_000);
    expect(Math.max(...out)).toBe(32_767);
    expect(Math.min(...out)).toBe(-32_768);
  });

  it('runs the same on floats as the worklet feeds it, with a bounded memory', () => {
    const input = tone(48_000, 1_000, 4_800);
    const core = new SincResampler(48_000, 16_000);
    const output = new Float32Array(core.maxOutput(input.length) + core.maxFlush() + 2);
    let count = core.process(s16ToFloat32(input), output);
    count += core.flush(output.subarray(count));
    const server = resample(input, 48_000, 16_000);
    expect(count).toBe(server.length);
    // The worklet's floats are s16/32768: the same filter, to within one step of rounding.
    expect(Math.max(...float32ToS16(output.subarray(0, count)).map((s, i) => Math.abs(s - server[i]!)))).toBeLessThanOrEqual(1);
    // A ratio needing a huge phase table is refused, not built.
    expect(() => new Resampler(44_101, 16_000)).toThrow(/bound/);
  });

  it('converts float32 to s16 with clipping, and back', () => {
    expect([...float32ToS16(Float32Array.of(0, 1, -1, 2, -2, 0.5))]).toEqual([0, 32767, -32768, 32767, -32768, 16384]);
    expect([...s16ToFloat32(Int16Array.of(-32768, 0, 16384))]).toEqual([-1, 0, 0.5]);
    expect(() => new Resampler(0, 16_000)).toThrow(/sample rate/);
  });
});

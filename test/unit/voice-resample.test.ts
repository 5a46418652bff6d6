import { describe, expect, it } from 'vitest';
import { float32ToS16, resample, Resampler, s16ToFloat32 } from '../../machines/voice/resample.ts';

const tone = (rate: number, ms: number, hz = 440): Int16Array =>
  Int16Array.from({ length: Math.round((rate * ms) / 1000) }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * hz * i) / rate)));

describe('resampling', () => {
  it('converts between 16, 22.05, 24 and 48 kHz keeping duration and waveform', () => {
    for (const [from, to] of [[24_000, 16_000], [22_050, 16_000], [16_000, 48_000], [48_000, 24_000], [16_000, 22_050]] as const) {
      const out = resample(tone(from, 1000), from, to);
      expect(out.length).toBe(to);
      const expected = tone(to, 1000);
      // The last samples past the final input pair hold the last value: left out of the comparison.
      const error = Math.max(...out.subarray(0, to - 3).map((s, i) => Math.abs(s - expected[i]!)));
      expect(error, `${from}→${to}`).toBeLessThan(300); // 3 % of the amplitude
    }
  });

  it('streams in chunks with no drift and no seams', () => {
    const input = tone(24_000, 3000);
    const whole = resample(input, 24_000, 16_000);
    const resampler = new Resampler(24_000, 16_000);
    const parts: number[] = [];
    for (let i = 0; i < input.length; i += 997) parts.push(...resampler.push(input.subarray(i, i + 997)));
    expect(parts.length).toBeGreaterThanOrEqual(whole.length - 1);
    expect(parts.length).toBeLessThanOrEqual(whole.length);
    expect(Int16Array.from(parts)).toEqual(whole.subarray(0, parts.length));
  });

  it('converts float32 to s16 with clipping, and back', () => {
    expect([...float32ToS16(Float32Array.of(0, 1, -1, 2, -2, 0.5))]).toEqual([0, 32767, -32768, 32767, -32768, 16384]);
    expect([...s16ToFloat32(Int16Array.of(-32768, 0, 16384))]).toEqual([-1, 0, 0.5]);
    expect(() => new Resampler(0, 16_000)).toThrow(/sample rate/);
  });
});

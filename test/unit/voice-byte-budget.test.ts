import { describe, expect, it } from 'vitest';
import { audioByteBudget, ByteBudget } from '../../runtime/kiosk/byte-budget.ts';

describe('ByteBudget', () => {
  it('allows the burst at once, then refills at the rate, never above the burst', () => {
    let now = 0;
    const budget = new ByteBudget(1000, 500, () => now);
    expect(budget.take(500)).toBe(true);
    expect(budget.take(1)).toBe(false);
    now = 100;
    expect(budget.take(101)).toBe(false); // a refused take spends nothing
    expect(budget.take(100)).toBe(true);
    now = 60_000;
    expect(budget.take(501)).toBe(false);
    expect(budget.take(500)).toBe(true);
  });

  it('gives microphone audio 1.5× real time with a one-second burst', () => {
    let now = 0;
    const budget = audioByteBudget(16_000, () => now);
    const frame = 640; // 20 ms at 16 kHz s16
    let sent = 0;
    while (budget.take(frame)) sent++;
    expect(sent).toBe(75); // 48,000 B burst
    // 1.5× real time (75 frames a second) is sustained forever…
    for (let second = 1; second <= 10; second++) {
      now = second * 1000;
      for (let i = 0; i < 75; i++) expect(budget.take(frame)).toBe(true);
    }
    // …2× is not: a second of it gets 1.5× through.
    now += 1000;
    let accepted = 0;
    for (let i = 0; i < 100; i++) if (budget.take(frame)) accepted++;
    expect(accepted).toBe(75);
  });

  it('ignores a clock stepping back and rejects nonsense', () => {
    let now = 1000;
    const budget = new ByteBudget(1000, 100, () => now);
    expect(budget.take(100)).toBe(true);
    now = 0;
    expect(budget.take(1)).toBe(false);
    now = 1050; // only the 50 ms past the last reading count
    expect(budget.take(50)).toBe(true);
    expect(budget.take(1)).toBe(false);
    expect(() => budget.take(-1)).toThrow(RangeError);
    expect(() => budget.take(0.5)).toThrow(RangeError);
    expect(() => new ByteBudget(0, 1)).toThrow(RangeError);
    expect(() => new ByteBudget(1, Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

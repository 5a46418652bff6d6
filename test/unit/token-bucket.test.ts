import { afterEach, describe, expect, it, vi } from 'vitest';
import { audioByteBudget, TokenBucket } from '../../runtime/kiosk/token-bucket.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('TokenBucket', () => {
  it('allows the burst at once, then refills at the rate, never above the capacity', () => {
    let now = 0;
    const bucket = new TokenBucket(1000, 500, () => now);
    expect(bucket.take(500)).toBe(true);
    expect(bucket.take(1)).toBe(false);
    now = 100;
    expect(bucket.take(101)).toBe(false); // a refused take spends nothing
    expect(bucket.take(100)).toBe(true);
    now = 60_000;
    expect(bucket.take(501)).toBe(false);
    expect(bucket.take(500)).toBe(true);
  });

  it('takes one token a text frame: the burst at once, then the rate', () => {
    let now = 0;
    const frames = new TokenBucket(20, 40, () => now);
    let admitted = 0;
    while (frames.take()) admitted++;
    expect(admitted).toBe(40);
    now = 500;
    admitted = 0;
    while (frames.take()) admitted++;
    expect(admitted).toBe(10);
  });

  it('a wall clock stepping back 60 s still admits the burst of text frames', () => {
    // Only the wall clock moves, as when NTP steps it: the monotonic clock goes on.
    vi.useFakeTimers({ toFake: ['Date'] });
    const frames = new TokenBucket(20, 40);
    vi.setSystemTime(Date.now() - 60_000);
    let admitted = 0;
    for (let i = 0; i < 40; i++) if (frames.take()) admitted++;
    expect(admitted).toBe(40);
  });

  it('ignores a clock stepping back and rejects nonsense', () => {
    let now = 1000;
    const bucket = new TokenBucket(1000, 100, () => now);
    expect(bucket.take(100)).toBe(true);
    now = 0;
    expect(bucket.take(1)).toBe(false);
    now = 1050; // only the 50 ms past the last reading count
    expect(bucket.take(50)).toBe(true);
    expect(bucket.take(1)).toBe(false);
    expect(() => bucket.take(-1)).toThrow(RangeError);
    expect(() => bucket.take(0.5)).toThrow(RangeError);
    expect(() => new TokenBucket(0, 1)).toThrow(RangeError);
    expect(() => new TokenBucket(1, Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('audioByteBudget', () => {
  it('gives microphone audio 1.5× real time with a two-second burst: a stall of three seconds catches up whole', () => {
    let now = 0;
    const budget = audioByteBudget(16_000, () => now);
    const frame = 640; // 20 ms at 16 kHz s16
    let sent = 0;
    while (budget.take(frame)) sent++;
    expect(sent).toBe(150); // 96,000 B burst: 3 s of audio
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
});

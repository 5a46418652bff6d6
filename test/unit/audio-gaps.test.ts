import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AudioGaps, GAP_AFTER_MS, GAP_TICK_MS } from '../../runtime/voice/audio-gaps.ts';

const MAX_FILL_MS = 1000;
let filledMs: number[];
let gaps: AudioGaps;

beforeEach(() => {
  vi.useFakeTimers();
  filledMs = [];
  gaps = new AudioGaps({ maxFillMs: MAX_FILL_MS, fill: (pcm) => filledMs.push(pcm.length / 16) });
});
afterEach(() => {
  gaps.close();
  vi.useRealTimers();
});

const total = () => filledMs.reduce((a, b) => a + b, 0);

describe('AudioGaps: a gap in the microphone audio reaches the listener as silence', () => {
  it('frames that come, even late by less than a gap, get no silence', () => {
    for (let i = 0; i < 50; i++) {
      gaps.heard();
      vi.advanceTimersByTime(GAP_AFTER_MS - 20);
    }
    expect(filledMs).toEqual([]);
  });

  it('a gap is filled from its start on the wall clock, then as it lasts, up to maxFillMs and no further', () => {
    gaps.heard();
    vi.advanceTimersByTime(GAP_AFTER_MS);
    expect(filledMs).toEqual([GAP_AFTER_MS]);
    vi.advanceTimersByTime(GAP_TICK_MS);
    expect(total()).toBe(GAP_AFTER_MS + GAP_TICK_MS);
    vi.advanceTimersByTime(10 * MAX_FILL_MS);
    expect(total()).toBe(MAX_FILL_MS);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('audio that comes back ends the gap; the next gap is filled again', () => {
    gaps.heard();
    vi.advanceTimersByTime(GAP_AFTER_MS + GAP_TICK_MS);
    const first = total();
    gaps.heard();
    vi.advanceTimersByTime(GAP_AFTER_MS - 1);
    expect(total()).toBe(first);
    vi.advanceTimersByTime(10 * MAX_FILL_MS);
    expect(total()).toBe(first + MAX_FILL_MS);
  });

  it('close stops the timer', () => {
    gaps.heard();
    gaps.close();
    vi.advanceTimersByTime(MAX_FILL_MS);
    expect(filledMs).toEqual([]);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AudioGaps, GAP_AFTER_MS, GAP_TICK_MS } from '../../runtime/voice/audio-gaps.ts';

const MAX_FILL_MS = 1000;
/** A 20 ms frame at 16 kHz. */
const FRAME = 320;
const FRAME_MS = 20;
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
      gaps.heard(FRAME);
      vi.advanceTimersByTime(GAP_AFTER_MS + FRAME_MS - 20);
    }
    expect(filledMs).toEqual([]);
  });

  it('a gap is filled from the end of the audio heard, then as it lasts, up to maxFillMs and no further', () => {
    gaps.heard(FRAME);
    vi.advanceTimersByTime(FRAME_MS + GAP_AFTER_MS);
    expect(filledMs).toEqual([GAP_AFTER_MS]);
    vi.advanceTimersByTime(GAP_TICK_MS);
    expect(total()).toBe(GAP_AFTER_MS + GAP_TICK_MS);
    vi.advanceTimersByTime(10 * MAX_FILL_MS);
    expect(total()).toBe(MAX_FILL_MS);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('audio sent faster than real time is no gap until the wall clock has passed it', () => {
    // Three seconds of audio at once (a file sent ahead of time).
    for (let i = 0; i < 150; i++) gaps.heard(FRAME);
    vi.advanceTimersByTime(3000 + GAP_AFTER_MS - 1);
    expect(filledMs).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(filledMs).toEqual([GAP_AFTER_MS]);
  });

  it('audio that comes back ends the gap; the next gap is filled again', () => {
    gaps.heard(FRAME);
    vi.advanceTimersByTime(FRAME_MS + GAP_AFTER_MS + GAP_TICK_MS);
    const first = total();
    gaps.heard(FRAME);
    vi.advanceTimersByTime(FRAME_MS + GAP_AFTER_MS - 1);
    expect(total()).toBe(first);
    vi.advanceTimersByTime(10 * MAX_FILL_MS);
    expect(total()).toBe(first + MAX_FILL_MS);
  });

  it('close stops the timer', () => {
    gaps.heard(FRAME);
    gaps.close();
    vi.advanceTimersByTime(MAX_FILL_MS);
    expect(filledMs).toEqual([]);
  });
});

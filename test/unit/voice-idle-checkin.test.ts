import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { IdleCheckin } from '../../runtime/voice/idle-checkin.ts';

/** A check-in whose line is "spoken" when `moment()` allows it; `spoken` counts the lines. */
function checkin(idleMs: number, moment: () => boolean = () => true) {
  const state = { spoken: 0 };
  const idle = new IdleCheckin({
    idleMs,
    speak: () => {
      if (!moment()) return false;
      state.spoken += 1;
      return true;
    },
  });
  return { idle, state };
}

const IDLE_MS = 30_000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the idle check-in (IDLE_CHECKIN_MS)', () => {
  it('is off by default: IDLE_CHECKIN_MS is 0, and at 0 no silence is ever timed', () => {
    expect(loadConfig({}).IDLE_CHECKIN_MS).toBe(0);
    const { idle, state } = checkin(loadConfig({}).IDLE_CHECKIN_MS);
    idle.replyEnded();
    expect(idle.armed).toBe(false);
    vi.advanceTimersByTime(24 * 3_600_000);
    expect(state.spoken).toBe(0);
  });

  it('on: one line after the silence, and not twice in the same silence', () => {
    const { idle, state } = checkin(IDLE_MS);
    idle.replyEnded();
    vi.advanceTimersByTime(IDLE_MS - 1);
    expect(state.spoken).toBe(0);
    vi.advanceTimersByTime(1);
    expect(state.spoken).toBe(1);
    // The check-in line itself finishes playing: that is no new silence, the senior has not spoken.
    idle.replyEnded();
    expect(idle.armed).toBe(false);
    vi.advanceTimersByTime(10 * IDLE_MS);
    expect(state.spoken).toBe(1);
  });

  it('speech resets it: no line while the senior speaks, and once they have spoken the next silence may have one', () => {
    const { idle, state } = checkin(IDLE_MS);
    idle.replyEnded();
    vi.advanceTimersByTime(IDLE_MS - 1000);
    idle.heard();
    vi.advanceTimersByTime(10 * IDLE_MS);
    expect(state.spoken).toBe(0);
    // The senior's turn is answered; after that reply, a full silence again.
    idle.replyEnded();
    vi.advanceTimersByTime(IDLE_MS);
    expect(state.spoken).toBe(1);
    idle.heard();
    idle.replyEnded();
    vi.advanceTimersByTime(IDLE_MS);
    expect(state.spoken).toBe(2);
  });

  it('a reply starting (or a muted microphone) cancels the wait; a moment that is not right speaks nothing and re-arms nothing', () => {
    const { idle, state } = checkin(IDLE_MS);
    idle.replyEnded();
    idle.cancel();
    vi.advanceTimersByTime(2 * IDLE_MS);
    expect(state.spoken).toBe(0);

    let right = false;
    const busy = checkin(IDLE_MS, () => right);
    busy.idle.replyEnded();
    vi.advanceTimersByTime(IDLE_MS);
    expect(busy.state.spoken).toBe(0);
    expect(busy.idle.armed).toBe(false);
    right = true;
    vi.advanceTimersByTime(10 * IDLE_MS);
    expect(busy.state.spoken).toBe(0);
    // Not having spoken, the next reply's silence still may have its line.
    busy.idle.replyEnded();
    vi.advanceTimersByTime(IDLE_MS);
    expect(busy.state.spoken).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { moodTier } from '../../machines/memory/derivation.ts';
import { evaluationStart, keepRecordedStarts, moodEpisodes, recentAlerts, shiftDay, type DailyMood, type MoodAlert } from '../../machines/memory/mood-alerts.ts';

const D0 = '2026-11-01';
const day = (n: number) => shiftDay(D0, n);
/** Day `n` with one score of `average` (its dominant tier is that score's). */
const scored = (n: number, average: number): DailyMood => ({ day: day(n), average, dominantTier: moodTier(average) });
const LOW = 20;
const FINE = 60;
const streaksOnly = { streakDays: 3, weeklyDrop: 0 };
const dropsOnly = { streakDays: 0, weeklyDrop: 15 };

describe('tier_streak', () => {
  it('is N scored days in a row whose dominant tier is preoccupant, open while nothing ended it', () => {
    expect(moodEpisodes([scored(0, FINE), scored(1, LOW), scored(2, LOW), scored(3, LOW)], day(0), streaksOnly)).toEqual([
      { kind: 'tier_streak', open: true, from: day(1), to: day(3), days: 3, tier: 'preoccupant' },
    ]);
  });

  it('needs the whole N days: one fewer is no episode', () => {
    expect(moodEpisodes([scored(1, LOW), scored(2, LOW), scored(3, FINE)], day(0), streaksOnly)).toEqual([]);
  });

  it('is neither started nor ended by days without a score', () => {
    // Days 2, 3 and 5 have no score: the streak runs across them and counts the scored days only.
    const days = [scored(0, LOW), scored(1, LOW), scored(4, LOW), scored(6, LOW)];
    expect(moodEpisodes(days, day(0), streaksOnly)).toEqual([{ kind: 'tier_streak', open: true, from: day(0), to: day(6), days: 4, tier: 'preoccupant' }]);
  });

  it('closes on a scored day of another dominant tier; a later streak is a new episode', () => {
    const days = [scored(0, LOW), scored(1, LOW), scored(2, LOW), scored(3, 45), scored(5, LOW), scored(6, LOW), scored(9, LOW)];
    expect(moodEpisodes(days, day(0), streaksOnly)).toEqual([
      { kind: 'tier_streak', open: false, from: day(0), to: day(2), days: 3, tier: 'preoccupant' },
      { kind: 'tier_streak', open: true, from: day(5), to: day(9), days: 3, tier: 'preoccupant' },
    ]);
  });

  it('reads the dominant tier, not the average: a day mostly preoccupant counts', () => {
    const days = [0, 1, 2].map((n) => ({ day: day(n), average: 55, dominantTier: 'preoccupant' as const }));
    expect(moodEpisodes(days, day(0), streaksOnly)).toHaveLength(1);
  });

  it('is off at 0', () => {
    expect(moodEpisodes([0, 1, 2, 3, 4].map((n) => scored(n, LOW)), day(0), { streakDays: 0, weeklyDrop: 0 })).toEqual([]);
  });
});

describe('weekly_drop', () => {
  /** Days 0–6 at 70, days 7–13 at 40: read from day -7, so every day from 6 on has both its weeks read. */
  const fall = [...[0, 1, 2, 3, 4, 5, 6].map((n) => scored(n, 70)), ...[7, 8, 9, 10, 11, 12, 13].map((n) => scored(n, 40))];

  it('starts on the first scored day whose week is X points under the week before, with that last day’s numbers', () => {
    // Day 9: days 3–9 average (4×70 + 3×40)/7 = 57.1, days -4…2 (only 0–2 scored) 70: 12.9.
    // Day 10: (3×70 + 4×40)/7 = 52.9 against 70: 17.1 ≥ 15. Day 13: 40 against 70: 30.
    expect(moodEpisodes(fall, day(-7), dropsOnly)).toEqual([{ kind: 'weekly_drop', open: true, from: day(10), to: day(13), days: 4, previousAverage: 70, average: 40, drop: 30 }]);
  });

  it('counts a drop of exactly X points', () => {
    const days = [scored(0, 80), scored(7, 60)];
    expect(moodEpisodes(days, day(-6), { streakDays: 0, weeklyDrop: 20 })).toEqual([{ kind: 'weekly_drop', open: true, from: day(7), to: day(7), days: 1, previousAverage: 80, average: 60, drop: 20 }]);
    expect(moodEpisodes(days, day(-6), { streakDays: 0, weeklyDrop: 20.1 })).toEqual([]);
  });

  it('needs a score in both weeks', () => {
    // Day 14's week before (days 1–7) has no score: no comparison, so no drop.
    expect(moodEpisodes([scored(0, 90), scored(14, 10)], day(-13), dropsOnly)).toEqual([]);
  });

  it('closes once the week recovers; a later fall is a new episode', () => {
    const days = [...fall, ...[14, 15, 16, 17, 18, 19, 20].map((n) => scored(n, 70)), ...[28, 29].map((n) => scored(n, 30))];
    const drops = moodEpisodes(days, day(-7), dropsOnly);
    expect(drops.map(({ from, to, open }) => ({ from, to, open }))).toEqual([
      // Day 14: days 8–14 average (6×40 + 70)/7 = 44.3 against days 1–7's (6×70 + 40)/7 = 65.7: 21.4, still in.
      // Day 15: (5×40 + 2×70)/7 = 48.6 against (5×70 + 2×40)/7 = 61.4: 12.8, out.
      { from: day(10), to: day(14), open: false },
      // Day 28: only days 22–28 → day 28 at 30, against days 15–21 at 70.
      { from: day(28), to: day(29), open: true },
    ]);
  });

  it('tells nothing on a day whose week before starts before what was read: such a day neither starts nor ends an episode', () => {
    // Read from day 0, day 13 is the first whose two weeks were both read.
    expect(moodEpisodes(fall, day(0), dropsOnly)).toEqual([{ kind: 'weekly_drop', open: true, from: day(13), to: day(13), days: 1, previousAverage: 70, average: 40, drop: 30 }]);
  });

  it('ignores the days before what was read', () => {
    expect(moodEpisodes([scored(-20, 99), ...fall], day(-7), dropsOnly)).toEqual(moodEpisodes(fall, day(-7), dropsOnly));
  });

  it('is off at 0', () => {
    expect(moodEpisodes(fall, day(-7), { streakDays: 0, weeklyDrop: 0 })).toEqual([]);
  });
});

describe('what is read, recorded and shown', () => {
  const streak = (from: number, to: number, open = false): MoodAlert => ({ kind: 'tier_streak', open, from: day(from), to: day(to), days: to - from + 1, tier: 'preoccupant' });

  it('reads the 30 days shown and the 13 before them, and further back to the look-back of a recorded episode that reaches into them', () => {
    expect(evaluationStart(day(60), [])).toBe(day(60 - 29 - 13));
    expect(evaluationStart(day(60), [{ kind: 'tier_streak', from: day(5), to: day(40) }])).toBe(day(5 - 13));
    expect(evaluationStart(day(60), [{ kind: 'tier_streak', from: day(50), to: day(55) }])).toBe(day(60 - 29 - 13));
  });

  it('keeps a recorded episode’s first day when the same episode is now read to start on another', () => {
    const known = [{ kind: 'tier_streak' as const, from: day(2), to: day(8) }];
    expect(keepRecordedStarts([streak(4, 10, true)], known)).toEqual([{ ...streak(4, 10, true), from: day(2) }]);
    // Another kind, or days that do not overlap: another episode.
    expect(keepRecordedStarts([streak(9, 12)], known)).toEqual([streak(9, 12)]);
    expect(keepRecordedStarts([{ ...streak(4, 10), kind: 'weekly_drop', previousAverage: 60, average: 40, drop: 20 } as MoodAlert], known)[0]!.from).toBe(day(4));
  });

  it('shows the episodes that reach into the last 30 days, the latest start first', () => {
    const today = day(60);
    const shown = recentAlerts([streak(10, 30), streak(20, 31), streak(40, 45), streak(50, 60, true)], today);
    expect(shown.map((e) => [e.from, e.to])).toEqual([
      [day(50), day(60)],
      [day(40), day(45)],
      [day(20), day(31)],
    ]);
  });
});

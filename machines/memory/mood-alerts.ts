import type { MoodTier } from './derivation.ts';
import { dayNumber } from './dream.ts';

/**
 * The caregivers' mood alerts (docs/operations.md, « Caregiver alerts »): episodes read from the
 * daily mood rollup (Europe/Paris days), numbers only.
 *
 * Only days with a score count. A day without one neither starts nor ends an episode: a senior
 * who did not talk to the kiosk for two days and is still preoccupied on the third is still in
 * the same streak. So `days` is the number of scored days an episode holds, and an episode is
 * `open` while no later scored day has ended it.
 */

/** A day of the mood timeline as the rule reads it (PgMoodScoresRepository.timeline's days). */
export interface DailyMood {
  day: string;
  average: number;
  dominantTier: MoodTier;
}

export interface MoodAlertSettings {
  /** Scored days in a row whose dominant tier is `preoccupant` that make a streak; 0: off. */
  streakDays: number;
  /** Points the last 7 days' average must be below the 7 days before; 0: off. */
  weeklyDrop: number;
}

export const MOOD_ALERT_KINDS = ['tier_streak', 'weekly_drop'] as const;
export type MoodAlertKind = (typeof MOOD_ALERT_KINDS)[number];

interface Episode {
  open: boolean;
  /** First and last scored day of the episode (YYYY-MM-DD, Europe/Paris). */
  from: string;
  to: string;
  days: number;
}
export type TierStreak = Episode & { kind: 'tier_streak'; tier: 'preoccupant' };
/** Its numbers are those of its last day: the two weeks that ended on `to`. */
export type WeeklyDrop = Episode & { kind: 'weekly_drop'; previousAverage: number; average: number; drop: number };
export type MoodAlert = TierStreak | WeeklyDrop;

/** The alerts a caregiver is shown: those that reach into the last 30 days, today included. */
export const ALERT_WINDOW_DAYS = 30;
const WEEK = 7;
/** A drop on a day compares the week that ends on it with the week before: 13 earlier days are read. */
export const ALERT_LOOKBACK_DAYS = 2 * WEEK - 1;

export function shiftDay(day: string, days: number): string {
  return new Date((dayNumber(day) + days) * 86_400_000).toISOString().slice(0, 10);
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

interface Run<T> {
  from: string;
  to: string;
  days: number;
  open: boolean;
  /** What the last day's test gave. */
  last: T;
}

/**
 * Runs of scored days on which `holds` gives a value; `false` ends a run, `null` (nothing can be
 * told that day) neither starts nor ends one. The last run is open.
 */
function runsOf<T>(scored: readonly DailyMood[], holds: (day: DailyMood) => T | false | null): Run<T>[] {
  const runs: Run<T>[] = [];
  let run: Run<T> | null = null;
  for (const day of scored) {
    const value = holds(day);
    if (value === null) continue;
    if (value === false) {
      if (run) runs.push(run);
      run = null;
      continue;
    }
    if (!run) run = { from: day.day, to: day.day, days: 0, open: false, last: value };
    run.to = day.day;
    run.days += 1;
    run.last = value;
  }
  if (run) runs.push({ ...run, open: true });
  return runs;
}

function tierStreaks(scored: readonly DailyMood[], streakDays: number): TierStreak[] {
  return runsOf(scored, (d) => d.dominantTier === 'preoccupant')
    .filter((run) => run.days >= streakDays)
    .map(({ from, to, days, open }) => ({ kind: 'tier_streak', open, from, to, days, tier: 'preoccupant' }));
}

/**
 * A scored day is in a drop when the mean of the daily averages of the 7 days ending on it is at
 * least `points` below that of the 7 days before, both weeks with a scored day. Each day weighs
 * the same: one talkative day does not outweigh the rest of its week.
 */
function weeklyDrops(scored: readonly DailyMood[], since: string, points: number): WeeklyDrop[] {
  const first = dayNumber(since);
  const week = (end: number) => scored.filter((d) => dayNumber(d.day) <= end && dayNumber(d.day) > end - WEEK).map((d) => d.average);
  return runsOf(scored, (d) => {
    const n = dayNumber(d.day);
    // Its week before starts before what was read: unknown, not « no drop ».
    if (n - ALERT_LOOKBACK_DAYS < first) return null;
    const before = week(n - WEEK);
    if (before.length === 0) return false;
    const previousAverage = round1(mean(before));
    const average = round1(mean(week(n)));
    const drop = round1(previousAverage - average);
    return drop >= points ? { previousAverage, average, drop } : false;
  }).map(({ from, to, days, open, last }) => ({ kind: 'weekly_drop', open, from, to, days, ...last }));
}

/** Every episode in `days` read from `since` on (earlier days are ignored), oldest first within each kind. */
export function moodEpisodes(days: readonly DailyMood[], since: string, settings: MoodAlertSettings): MoodAlert[] {
  const scored = days.filter((d) => d.day >= since).sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  return [...(settings.streakDays > 0 ? tierStreaks(scored, settings.streakDays) : []), ...(settings.weeklyDrop > 0 ? weeklyDrops(scored, since, settings.weeklyDrop) : [])];
}

/** An episode already recorded: its kind and days. */
export interface KnownEpisode {
  kind: MoodAlertKind;
  from: string;
  to: string;
}

/**
 * The first day an evaluation on `today` reads: the alert window and its look-back, and further back
 * to the look-back of the recorded episodes that reach into the window (`known`), so each is read whole.
 */
export function evaluationStart(today: string, known: readonly KnownEpisode[]): string {
  const window = shiftDay(today, -(ALERT_WINDOW_DAYS - 1) - ALERT_LOOKBACK_DAYS);
  return known.reduce((start, k) => {
    const own = shiftDay(k.from, -ALERT_LOOKBACK_DAYS);
    return own < start ? own : start;
  }, window);
}

/**
 * An episode keeps the first day it was recorded with (its key): one that overlaps a recorded
 * episode of its kind is that episode, even when what was read now makes it start on another day
 * (the days read moved, or an earlier score arrived late).
 */
export function keepRecordedStarts(episodes: readonly MoodAlert[], known: readonly KnownEpisode[]): MoodAlert[] {
  return episodes.map((e) => {
    const same = known.filter((k) => k.kind === e.kind && k.from <= e.to && e.from <= k.to).sort((a, b) => (a.from < b.from ? -1 : 1))[0];
    return same ? { ...e, from: same.from } : e;
  });
}

/** What a caregiver is shown on `today`: the episodes that reach into the last ALERT_WINDOW_DAYS days, the latest start first. */
export function recentAlerts(episodes: readonly MoodAlert[], today: string): MoodAlert[] {
  const first = shiftDay(today, -(ALERT_WINDOW_DAYS - 1));
  return episodes.filter((e) => e.to >= first).sort((a, b) => (a.from !== b.from ? (a.from < b.from ? 1 : -1) : a.kind < b.kind ? -1 : 1));
}

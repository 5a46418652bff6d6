import { describe, expect, it } from 'vitest';
import {
  EMPTY_PAUSE_PROFILE,
  PAUSE_BINS,
  PAUSE_FLOOR_MS,
  PAUSES_PER_SESSION_MAX,
  parsePauseProfile,
  pauseQuantile,
  pauseSummary,
  recordPause,
  recordPauses,
} from '../../machines/voice/pause-profile.ts';

describe('a senior’s pause profile', () => {
  it('holds numbers only: bins of pause length and a count', () => {
    const profile = recordPauses(EMPTY_PAUSE_PROFILE, [300, 450, 900]);
    expect(Object.keys(profile).sort()).toEqual(['bins', 'count', 'version']);
    expect(profile.bins).toHaveLength(PAUSE_BINS);
    expect(profile.bins.every((b) => typeof b === 'number')).toBe(true);
    expect(profile.count).toBe(3);
    expect(JSON.stringify(profile)).toMatch(/^[{}[\]",:a-z0-9.e-]+$/);
  });

  it('ignores gaps between words (below the floor) and anything not a length', () => {
    expect(recordPause(EMPTY_PAUSE_PROFILE, PAUSE_FLOOR_MS - 1)).toBe(EMPTY_PAUSE_PROFILE);
    expect(recordPause(EMPTY_PAUSE_PROFILE, Number.NaN)).toBe(EMPTY_PAUSE_PROFILE);
    expect(recordPause(EMPTY_PAUSE_PROFILE, PAUSE_FLOOR_MS).count).toBe(1);
  });

  it('reads quantiles from the histogram; the recent pauses weigh more than old ones', () => {
    expect(pauseQuantile(EMPTY_PAUSE_PROFILE, 0.9)).toBeNull();
    const short = recordPauses(EMPTY_PAUSE_PROFILE, new Array(50).fill(350));
    expect(pauseQuantile(short, 0.5)).toBeGreaterThanOrEqual(300);
    expect(pauseQuantile(short, 0.9)).toBeLessThanOrEqual(400);
    // The senior now pauses longer: after as many new pauses, the profile follows them.
    const later = recordPauses(short, new Array(50).fill(1450));
    expect(pauseQuantile(later, 0.5)).toBeGreaterThan(1400);
    // Pauses past the last bin count in it (bounded), never grow the profile.
    const long = recordPause(later, 60_000);
    expect(long.bins).toHaveLength(PAUSE_BINS);
  });

  it('one session adds at most PAUSES_PER_SESSION_MAX pauses', () => {
    expect(recordPauses(EMPTY_PAUSE_PROFILE, new Array(PAUSES_PER_SESSION_MAX + 50).fill(500)).count).toBe(PAUSES_PER_SESSION_MAX);
  });

  it('a stored value that is not a profile reads as empty', () => {
    for (const bad of [null, undefined, {}, { version: 2, bins: [], count: 0 }, { version: 1, bins: ['x'], count: 1 }, { version: 1, bins: new Array(PAUSE_BINS).fill(-1), count: 1 }]) {
      expect(parsePauseProfile(bad)).toEqual(EMPTY_PAUSE_PROFILE);
    }
    const good = recordPauses(EMPTY_PAUSE_PROFILE, [500, 700]);
    expect(parsePauseProfile(JSON.parse(JSON.stringify(good)))).toEqual(good);
  });

  it('summarizes for an admin as a count and two quantiles', () => {
    expect(pauseSummary(EMPTY_PAUSE_PROFILE)).toEqual({ count: 0, p50Ms: null, p90Ms: null });
    const summary = pauseSummary(recordPauses(EMPTY_PAUSE_PROFILE, new Array(20).fill(800)));
    expect(summary.count).toBe(20);
    expect(summary.p50Ms).toBeGreaterThanOrEqual(800);
    expect(summary.p90Ms).toBeLessThanOrEqual(900);
  });
});

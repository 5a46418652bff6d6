import { describe, expect, it } from 'vitest';
import { alertSentence } from '../../runtime/caregiver/page/mood-alerts.js';

/** The caregivers' page's sentence for each mood alert kind (the page's own module, run in Node). */
describe('a mood alert as the caregivers’ page says it', () => {
  it('an open streak of preoccupying days, with its first and last day', () => {
    expect(alertSentence({ kind: 'tier_streak', open: true, from: '2026-11-30', to: '2026-12-02', days: 3, tier: 'preoccupant' })).toBe(
      'Humeur préoccupante 3 jours de suite, du 30 novembre au 2 décembre',
    );
  });

  it('a month’s first day as French writes it, « 1er »', () => {
    expect(alertSentence({ kind: 'tier_streak', open: true, from: '2026-12-01', to: '2026-12-03', days: 3, tier: 'preoccupant' })).toBe(
      'Humeur préoccupante 3 jours de suite, du 1er décembre au 3 décembre',
    );
  });

  it('an open weekly drop, in whole points', () => {
    expect(alertSentence({ kind: 'weekly_drop', open: true, from: '2026-11-26', to: '2026-12-02', days: 7, previousAverage: 64.5, average: 46.3, drop: 18.2 })).toBe(
      'Humeur en baisse de 18 points sur la semaine',
    );
  });

  it('nothing for a closed alert or a kind the page does not know', () => {
    expect(alertSentence({ kind: 'tier_streak', open: false, from: '2026-11-30', to: '2026-12-02', days: 3, tier: 'preoccupant' })).toBeNull();
    expect(alertSentence({ kind: 'silence', open: true })).toBeNull();
  });
});

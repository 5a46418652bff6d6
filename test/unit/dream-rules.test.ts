import { describe, expect, it } from 'vitest';
import { CANDIDATE_QUEUE, parisDay, recordSightings, type Candidate } from '../../machines/memory/dream.ts';

const walk = (days: string[]) => {
  let candidates: Candidate[] = [];
  let promoted: Candidate[] = [];
  for (const [i, day] of days.entries()) {
    ({ candidates, promoted } = recordSightings(candidates, [{ pattern: 'Elle appelle sa fille le dimanche', category: 'contacts' }], day, i));
  }
  return { candidates, promoted };
};

describe('the dream’s promotion rule', () => {
  it('2 sightings in 7 days: not promoted', () => {
    expect(walk(['2026-11-01', '2026-11-03']).promoted).toEqual([]);
  });

  it('3 sightings in 7 days: promoted, and out of the queue', () => {
    const { promoted, candidates } = walk(['2026-11-01', '2026-11-03', '2026-11-07']);
    expect(promoted.map((p) => p.pattern)).toEqual(['Elle appelle sa fille le dimanche']);
    expect(candidates).toEqual([]);
  });

  it('3 sightings spread over 8 days: not promoted (the first has left the window)', () => {
    const { promoted, candidates } = walk(['2026-11-01', '2026-11-04', '2026-11-08']);
    expect(promoted).toEqual([]);
    expect(candidates[0]!.seenOn).toEqual(['2026-11-04', '2026-11-08']);
  });

  it('counts one sighting a day, and one candidate for one pattern said two ways', () => {
    let { candidates } = recordSightings([], [{ pattern: 'Aime le tricot.', category: 'profil' }], '2026-11-01', 1);
    ({ candidates } = recordSightings(candidates, [{ pattern: 'aime le  tricot', category: 'profil' }], '2026-11-01', 2));
    expect(candidates).toHaveLength(1);
    expect(candidates[0]!.seenOn).toEqual(['2026-11-01']);
  });

  it('keeps at most 30 candidates, the oldest dropping out first', () => {
    let candidates: Candidate[] = [];
    for (let i = 0; i < CANDIDATE_QUEUE + 5; i++) {
      ({ candidates } = recordSightings(candidates, [{ pattern: `motif ${i}`, category: 'profil' }], '2026-11-01', i));
    }
    expect(candidates).toHaveLength(CANDIDATE_QUEUE);
    expect(candidates.map((c) => c.pattern)).not.toContain('motif 4');
    expect(candidates.map((c) => c.pattern)).toContain('motif 34');
  });

  it('days are Europe/Paris days', () => {
    expect(parisDay(new Date('2026-11-30T23:30:00Z'))).toBe('2026-12-01');
    expect(parisDay(new Date('2026-07-31T21:59:00Z'))).toBe('2026-07-31');
  });
});

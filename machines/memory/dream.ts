import type { FactCategory } from './memory.port.ts';

/** A pattern seen on this many distinct days … */
export const PROMOTION_SIGHTINGS = 3;
/** … within this many days becomes a durable fact. */
export const PROMOTION_WINDOW_DAYS = 7;
/** Candidates waiting per senior; past it the oldest drops out (FIFO). */
export const CANDIDATE_QUEUE = 30;
export const NOTES_KEPT_DAYS = 30;

export interface Candidate {
  pattern: string;
  category: FactCategory;
  /** ISO days (YYYY-MM-DD) on which the consolidation proposed it. */
  seenOn: string[];
  createdAt: number;
}

/** Days since 1970-01-01 of an ISO day (YYYY-MM-DD). */
export const dayNumber = (day: string) => Math.round(Date.parse(`${day}T00:00:00Z`) / 86_400_000);

/** The same pattern said twice differently is one candidate. */
export const patternKey = (pattern: string) => pattern.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').replace(/[.!?]+$/, '').trim();

/**
 * Records today's proposed patterns among the candidates: a sighting per day, sightings older
 * than the window forgotten; those seen on PROMOTION_SIGHTINGS days within PROMOTION_WINDOW_DAYS
 * are promoted (and leave the queue); the queue keeps the CANDIDATE_QUEUE most recent.
 */
export function recordSightings(
  candidates: readonly Candidate[],
  proposed: ReadonlyArray<{ pattern: string; category: FactCategory }>,
  today: string,
  now: number,
): { candidates: Candidate[]; promoted: Candidate[] } {
  const byKey = new Map(candidates.map((c) => [patternKey(c.pattern), { ...c, seenOn: [...c.seenOn] }]));
  for (const p of proposed) {
    const key = patternKey(p.pattern);
    const candidate = byKey.get(key) ?? { pattern: p.pattern.trim(), category: p.category, seenOn: [], createdAt: now };
    if (!candidate.seenOn.includes(today)) candidate.seenOn.push(today);
    byKey.set(key, candidate);
  }
  const promoted: Candidate[] = [];
  const waiting: Candidate[] = [];
  for (const candidate of byKey.values()) {
    candidate.seenOn = candidate.seenOn.filter((d) => dayNumber(today) - dayNumber(d) < PROMOTION_WINDOW_DAYS).sort();
    if (candidate.seenOn.length >= PROMOTION_SIGHTINGS) promoted.push(candidate);
    else if (candidate.seenOn.length > 0) waiting.push(candidate);
  }
  waiting.sort((a, b) => b.createdAt - a.createdAt);
  return { candidates: waiting.slice(0, CANDIDATE_QUEUE), promoted };
}

/** The Europe/Paris calendar day of an instant: the dream's unit of idempotence. */
export function parisDay(at: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

/**
 * One senior's mid-sentence pauses, as numbers only: an exponentially decayed histogram of the
 * pauses that did NOT end the turn (speech resumed). Pure: the voice session records pauses in RAM,
 * the runtime stores the profile with the interlocutor profile (under the `conversation` consent)
 * and the end-of-turn decision reads it to lengthen or shorten this senior's waits.
 *
 * No word, no time of day, no transcript: bins of pause length and a count, nothing else.
 */
import { z } from 'zod';

/** Width of one bin. */
export const PAUSE_BIN_MS = 100;
/** Bins 0–100, 100–200 … 2900–3000 ms, then one for everything longer. */
export const PAUSE_BINS = 31;
/** Shorter silences are the gaps between words, not pauses. */
export const PAUSE_FLOOR_MS = 200;
/** Each new pause weighs this much against the history (memory of about 1 / 0.03 ≈ 33 pauses). */
export const PAUSE_DECAY = 0.03;
/** Fewer pauses than this say nothing about the senior: the settings apply unchanged. */
export const PAUSE_MIN_COUNT = 12;
/** The senior's waits follow this quantile of their mid-sentence pauses … */
export const PAUSE_QUANTILE = 0.9;
/** … plus this margin. */
export const PAUSE_MARGIN_MS = 300;
/** At most this many pauses of one session are written back (the rest of a very long session is dropped). */
export const PAUSES_PER_SESSION_MAX = 500;

export const PauseProfileSchema = z.object({
  version: z.literal(1),
  bins: z.array(z.number().finite().min(0).max(1 / PAUSE_DECAY + 1)).length(PAUSE_BINS),
  count: z.number().int().min(0).max(1_000_000),
});
export type PauseProfile = z.infer<typeof PauseProfileSchema>;

export const EMPTY_PAUSE_PROFILE: PauseProfile = Object.freeze({ version: 1, bins: Object.freeze(new Array<number>(PAUSE_BINS).fill(0)) as number[], count: 0 }) as PauseProfile;

/** A stored value read back: a malformed one counts as empty (never trusted, never thrown). */
export function parsePauseProfile(value: unknown): PauseProfile {
  const parsed = PauseProfileSchema.safeParse(value);
  return parsed.success ? parsed.data : EMPTY_PAUSE_PROFILE;
}

/** Whether a silence that speech ended counts as a mid-sentence pause. */
export const isPause = (ms: number): boolean => Number.isFinite(ms) && ms >= PAUSE_FLOOR_MS;

/** The profile with one more mid-sentence pause of `ms` (shorter ones are ignored). */
export function recordPause(profile: PauseProfile, ms: number): PauseProfile {
  if (!isPause(ms)) return profile;
  const bin = Math.min(PAUSE_BINS - 1, Math.floor(ms / PAUSE_BIN_MS));
  const bins = profile.bins.map((weight, i) => weight * (1 - PAUSE_DECAY) + (i === bin ? 1 : 0));
  return { version: 1, bins, count: Math.min(1_000_000, profile.count + 1) };
}

export function recordPauses(profile: PauseProfile, pauses: readonly number[]): PauseProfile {
  let next = profile;
  for (const ms of pauses.slice(0, PAUSES_PER_SESSION_MAX)) next = recordPause(next, ms);
  return next;
}

/** The `q` quantile (0–1) of the decayed histogram, interpolated within its bin; null when empty. */
export function pauseQuantile(profile: PauseProfile, q: number): number | null {
  let total = 0;
  for (const weight of profile.bins) total += weight;
  if (total <= 0) return null;
  const target = q * total;
  let below = 0;
  for (let i = 0; i < profile.bins.length; i++) {
    const weight = profile.bins[i]!;
    if (below + weight >= target && weight > 0) return (i + (target - below) / weight) * PAUSE_BIN_MS;
    below += weight;
  }
  return PAUSE_BINS * PAUSE_BIN_MS;
}

/** What an admin reads: numbers only. */
export function pauseSummary(profile: PauseProfile): { count: number; p50Ms: number | null; p90Ms: number | null } {
  const round = (v: number | null) => (v === null ? null : Math.round(v));
  return { count: profile.count, p50Ms: round(pauseQuantile(profile, 0.5)), p90Ms: round(pauseQuantile(profile, PAUSE_QUANTILE)) };
}

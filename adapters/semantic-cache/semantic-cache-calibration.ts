import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { isHealthQuestion } from '../../machines/cache/health-topics.ts';
import { guardsAgree, questionGuard } from '../../machines/cache/near-miss-guard.ts';
import { normalizeQuestion } from '../../machines/french/words.ts';

export const CACHE_PROFILES = ['strict', 'permissive', 'aggressive', 'off'] as const;
export type CacheProfile = (typeof CACHE_PROFILES)[number];
export type ActiveProfile = Exclude<CacheProfile, 'off'>;
export const ACTIVE_PROFILES: readonly ActiveProfile[] = ['strict', 'permissive', 'aggressive'];
/**
 * Each profile's promise: the precision it must reach to be offered at all, on pairs written after the
 * guard's rules were final (the calibration's `unseen` set). The held-out part of the calibration set
 * does not decide: its false hits were read, and rules written for them.
 */
export const PROFILE_PRECISION: Record<ActiveProfile, number> = { strict: 0.98, permissive: 0.95, aggressive: 0.9 };

export const DEFAULT_CALIBRATION_FILE = new URL('./semantic-cache.calibration.json', import.meta.url);

/** How the labelled pairs are split; said in the calibration file and the command's output. */
export const HELD_OUT_SHARE = 0.3;
export const SPLIT_METHOD = 'fixed held-out split: a pair is held out when the first 32 bits of sha256(its two normalised questions, sorted) mod 10 < 3';

export const Score = z.object({
  pairs: z.number().int(),
  positives: z.number().int(),
  hits: z.number().int(),
  falseHits: z.number().int(),
  precision: z.number(),
  hitRate: z.number(),
  /** Same-meaning pairs about health are never served: the hit rate over the others. */
  positivesOutsideHealth: z.number().int().optional(),
  hitRateOutsideHealth: z.number().optional(),
});
export type Score = z.infer<typeof Score>;
export const KindScore = z.object({ same: z.boolean(), pairs: z.number().int(), hits: z.number().int(), health: z.number().int().optional() });
export type KindScore = z.infer<typeof KindScore>;
const ProfileCalibration = z.object({
  threshold: z.number(),
  /** Chosen on the training part, measured on the held-out part (which the rules were shaped beside)… */
  train: Score,
  heldOut: Score,
  heldOutByKind: z.record(z.string(), KindScore),
  /** …and on the unseen set, whose figures are the ones shown and decide `offered`. */
  unseen: Score,
  offered: z.boolean(),
});
export type ProfileCalibration = z.infer<typeof ProfileCalibration>;
const ModelCalibration = z.object({
  split: z.object({ method: z.string(), train: z.number().int(), heldOut: z.number().int() }),
  /** The pairs file written after the rules were final (evaluated once, never tuned on), as given to cache:calibrate. */
  unseen: z.object({ set: z.string(), pairs: z.number().int() }),
  strict: ProfileCalibration,
  permissive: ProfileCalibration,
  aggressive: ProfileCalibration,
  pairs: z.number().int(),
  calibratedAt: z.string(),
});
export type ModelCalibration = z.infer<typeof ModelCalibration>;

/** A labelled pair; `kind` (paraphrase, reorder, object, verb, …) is optional and only groups the figures. */
/** `long`: a pair of longer sentences (two clauses), reported apart by cache:evaluate — its promise differs. */
export const LabelledPair = z.object({ a: z.string().min(1), b: z.string().min(1), same: z.boolean(), kind: z.string().min(1).optional(), long: z.boolean().optional() });
export type LabelledPair = z.infer<typeof LabelledPair>;

/**
 * A per-model calibration file: entries by embedding model id, each checked against `entry`; one that
 * does not parse (an older format) is dropped, so that model runs uncalibrated until calibrated again.
 * The semantic cache's thresholds and recall's relevance floor are both kept this way.
 */
export function readCalibrationFile<T>(file: URL | string, entry: z.ZodType<T>): Record<string, T> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const out: Record<string, T> = {};
  for (const [modelId, value] of Object.entries(z.record(z.string(), z.unknown()).parse(json))) {
    const parsed = entry.safeParse(value);
    if (parsed.success) out[modelId] = parsed.data;
  }
  return out;
}

/** Writes one model's entry, keeping the others (and dropping those that no longer parse). */
export function writeCalibrationFile<T>(file: URL | string, entry: z.ZodType<T>, modelId: string, calibration: T): void {
  const all = readCalibrationFile(file, entry);
  all[modelId] = calibration;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * The calibrations by embedding model id. An entry without held-out and unseen figures (an older
 * calibration) is dropped: that model then runs with the cache off until it is calibrated again.
 */
export function readCalibrations(file: URL | string = DEFAULT_CALIBRATION_FILE): Record<string, ModelCalibration> {
  return readCalibrationFile(file, ModelCalibration);
}

/** `file` unset (SEMANTIC_CACHE_CALIBRATION_FILE's default): the shipped calibration. */
export function writeCalibration(modelId: string, calibration: ModelCalibration, file: URL | string = DEFAULT_CALIBRATION_FILE): void {
  writeCalibrationFile(file, ModelCalibration, modelId, calibration);
}

/** A score as the banner says it, naming the set it was measured on. */
const figures = (s: Score, set: string) =>
  `precision ${s.precision.toFixed(3)}, hit rate ${s.hitRate.toFixed(3)}${s.hitRateOutsideHealth === undefined ? '' : ` (${s.hitRateOutsideHealth.toFixed(3)} outside health, never cached)`} on ${s.pairs} pairs written after the rules (${set})`;

/**
 * The active threshold, or why there is none (the cache then runs off, said once at start): a
 * profile whose precision on the unseen set misses its promise is not offered.
 */
export function thresholdFor(profile: CacheProfile, modelId: string, calibrations: Record<string, ModelCalibration>): { threshold: number | null; reason: string } {
  if (profile === 'off') return { threshold: null, reason: 'SEMANTIC_CACHE_PROFILE=off' };
  const calibration = calibrations[modelId];
  if (!calibration) return { threshold: null, reason: `no calibration for embedding model ${modelId} (npm run cache:calibrate)` };
  const p = calibration[profile];
  if (!p.offered) return { threshold: null, reason: `${profile} not offered for ${modelId}: ${figures(p.unseen, calibration.unseen.set)}, below its promise ${PROFILE_PRECISION[profile]}` };
  return { threshold: p.threshold, reason: `${profile}: threshold ${p.threshold.toFixed(4)}, ${figures(p.unseen, calibration.unseen.set)}` };
}

/** Whether a key falls in the held-out share: the first 32 bits of its sha256, mod 10, below 3. */
export function isHeldOutKey(key: string): boolean {
  return createHash('sha256').update(key).digest().readUInt32BE(0) % 10 < HELD_OUT_SHARE * 10;
}

/** Whether a pair is held out: deterministic, independent of order and of case, accents and punctuation. */
export function isHeldOut(pair: Pick<LabelledPair, 'a' | 'b'>): boolean {
  return isHeldOutKey([normalizeQuestion(pair.a), normalizeQuestion(pair.b)].sort().join('\u0000'));
}

/** `heldOut` decides each pair's side: by default the pair itself; recall holds out whole questions. */
export function splitPairs<T extends Pick<LabelledPair, 'a' | 'b'>>(pairs: T[], held: (pair: T) => boolean = isHeldOut): { train: T[]; heldOut: T[] } {
  const train: T[] = [];
  const heldOut: T[] = [];
  for (const p of pairs) (held(p) ? heldOut : train).push(p);
  return { train, heldOut };
}

/** A pair with its cosine similarity, whether the near-miss guard lets it through, and whether it is about health (never served). */
export interface ScoredPair extends LabelledPair {
  similarity: number;
  guarded: boolean;
  health: boolean;
}

export function scorePairs(pairs: LabelledPair[], similarity: number[]): ScoredPair[] {
  return pairs.map((p, i) => {
    const health = isHealthQuestion(p.a) || isHealthQuestion(p.b);
    return { ...p, similarity: similarity[i]!, health, guarded: !health && guardsAgree(questionGuard(p.a), questionGuard(p.b)) };
  });
}

/** The whole hit decision, as the cache takes it: not about health, similarity at or above the threshold AND the guard. */
export const isHit = (p: ScoredPair, threshold: number) => p.similarity >= threshold && p.guarded;

/** Precision over the hits (1 when there is none), paraphrase hit rate over the same-meaning pairs. */
export function score(pairs: ScoredPair[], threshold: number): Score {
  let hits = 0;
  let falseHits = 0;
  let positives = 0;
  let outside = 0;
  for (const p of pairs) {
    if (p.same) positives += 1;
    if (p.same && !p.health) outside += 1;
    if (!isHit(p, threshold)) continue;
    hits += 1;
    if (!p.same) falseHits += 1;
  }
  const rate = (n: number) => (n === 0 ? 0 : (hits - falseHits) / n);
  return { pairs: pairs.length, positives, hits, falseHits, precision: hits === 0 ? 1 : (hits - falseHits) / hits, hitRate: rate(positives), positivesOutsideHealth: outside, hitRateOutsideHealth: rate(outside) };
}

/** Per kind: how many pairs, how many about health (never served), how many hits (for a near-miss kind every hit is a false hit). */
export function scoreByKind(pairs: ScoredPair[], threshold: number): Record<string, KindScore> {
  const out: Record<string, KindScore> = {};
  for (const p of pairs) {
    if (!p.kind) continue;
    const k = (out[p.kind] ??= { same: p.same, pairs: 0, hits: 0, health: 0 });
    k.pairs += 1;
    if (p.health) k.health = (k.health ?? 0) + 1;
    if (isHit(p, threshold)) k.hits += 1;
  }
  return out;
}

/**
 * No threshold goes below this similarity, whatever the training pairs allow: with a guard good
 * enough, the lowest threshold reaching the promise can fall to where the embedding filters nothing,
 * and then the lexicon alone decides. The floor keeps two independent checks on every hit.
 */
export const MIN_THRESHOLD = 0.3;

/** The lowest threshold (not below MIN_THRESHOLD) whose decision reaches `target` precision on `pairs`. */
export function pickThreshold(pairs: ScoredPair[], target: number): number {
  const candidates = [...new Set(pairs.map((p) => p.similarity))].sort((x, y) => x - y);
  const lowest = candidates.find((t) => score(pairs, t).precision >= target);
  // No threshold reaches it: one above every pair, which never hits.
  if (lowest === undefined) return (candidates.at(-1) ?? 1) + 1e-6;
  // Raised to the least similar paraphrase it lets through: the same hits on these pairs, and a
  // margin against near-misses the guard does not know (it is often the guard alone that decides).
  let raised = Infinity;
  for (const p of pairs) if (p.same && isHit(p, lowest)) raised = Math.min(raised, p.similarity);
  return Math.max(MIN_THRESHOLD, raised === Infinity ? lowest : raised);
}

/** Labelled pairs written after the rules, with their similarities, and the file they came from. */
export interface UnseenPairs {
  set: string;
  pairs: LabelledPair[];
  similarity: number[];
}

/**
 * Honest calibration: each profile's threshold is picked on the training part only, measured on the
 * held-out part, and on the unseen set, whose figures decide whether the profile is offered.
 */
export function calibrate(pairs: LabelledPair[], similarity: number[], unseen: UnseenPairs): Omit<ModelCalibration, 'calibratedAt'> {
  const { train, heldOut } = splitPairs(scorePairs(pairs, similarity));
  const fresh = scorePairs(unseen.pairs, unseen.similarity);
  const profile = (name: ActiveProfile): ProfileCalibration => {
    const threshold = pickThreshold(train, PROFILE_PRECISION[name]);
    const measured = score(fresh, threshold);
    return {
      threshold,
      train: score(train, threshold),
      heldOut: score(heldOut, threshold),
      heldOutByKind: scoreByKind(heldOut, threshold),
      unseen: measured,
      offered: measured.hits > 0 && measured.precision >= PROFILE_PRECISION[name],
    };
  };
  return {
    split: { method: SPLIT_METHOD, train: train.length, heldOut: heldOut.length },
    unseen: { set: unseen.set, pairs: unseen.pairs.length },
    strict: profile('strict'),
    permissive: profile('permissive'),
    aggressive: profile('aggressive'),
    pairs: pairs.length,
  };
}

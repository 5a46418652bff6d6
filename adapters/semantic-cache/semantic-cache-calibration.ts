import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { isHealthQuestion } from '../../machines/cache/health-topics.ts';
import { guardsAgree, questionGuard } from '../../machines/cache/near-miss-guard.ts';
import { strictKey } from '../../machines/cache/strict-key.ts';
import { normalizeQuestion } from '../../machines/french/words.ts';

export const CACHE_PROFILES = ['strict', 'permissive', 'aggressive', 'off'] as const;
export type CacheProfile = (typeof CACHE_PROFILES)[number];
export type ActiveProfile = Exclude<CacheProfile, 'off'>;
export const ACTIVE_PROFILES: readonly ActiveProfile[] = ['strict', 'permissive', 'aggressive'];
/** The profiles that serve a similar question (a threshold and the near-miss guard); `strict` serves the same one only. */
export type SimilarityProfile = Exclude<ActiveProfile, 'strict'>;
export const SIMILARITY_PROFILES: readonly SimilarityProfile[] = ['permissive', 'aggressive'];
/**
 * Each profile's promise: the precision it must reach to be offered at all, on pairs its rules were never
 * shaped on (`strict`: every unseen set of strict-profile.json; the others: the calibration's `unseen` set).
 * The held-out part of the calibration set does not decide: its false hits were read, and rules written for them.
 */
export const PROFILE_PRECISION: Record<ActiveProfile, number> = { strict: 0.99, permissive: 0.95, aggressive: 0.9 };

export const DEFAULT_CALIBRATION_FILE = new URL('./semantic-cache.calibration.json', import.meta.url);
export const STRICT_FIGURES_FILE = new URL('./strict-profile.json', import.meta.url);

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
  `precision ${s.precision.toFixed(3)}, hit rate ${s.hitRate.toFixed(3)}${s.hitRateOutsideHealth === undefined ? '' : ` (${s.hitRateOutsideHealth.toFixed(3)} outside health, never cached)`} on ${s.pairs} pairs ${set}`;

/**
 * `strict`'s figures, measured on each pairs file its rules were never shaped on (`npm run cache:calibrate --
 * --strict`). They need no embedder: equal keys, or not. Offered when every set reaches the promise.
 */
const StrictSet = Score.extend({ set: z.string() });
export const StrictFigures = z.object({ promise: z.number(), sets: z.array(StrictSet).min(1), offered: z.boolean(), measuredAt: z.string() });
export type StrictFigures = z.infer<typeof StrictFigures>;

export function readStrictFigures(file: URL | string = STRICT_FIGURES_FILE): StrictFigures | null {
  try {
    return StrictFigures.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return null;
  }
}

/** `strict` on labelled pairs: every pair with equal keys is a hit, no similarity is asked. */
export const scoreStrict = (pairs: LabelledPair[]): Score => score(scorePairs(pairs, pairs.map(() => 0)), Infinity);

export function measureStrict(sets: Array<{ set: string; pairs: LabelledPair[] }>): Omit<StrictFigures, 'measuredAt'> {
  const measured = sets.map(({ set, pairs }) => ({ set, ...scoreStrict(pairs) }));
  return { promise: PROFILE_PRECISION.strict, sets: measured, offered: measured.some((m) => m.hits > 0) && measured.every((m) => m.precision >= PROFILE_PRECISION.strict) };
}

/** What the cache serves: by key (`strict`), and similar questions from `threshold` (null: none). */
export interface CacheSetting {
  strict: boolean;
  threshold: number | null;
  reason: string;
}

const strictSetting = (strict: StrictFigures | null, why = ''): CacheSetting => {
  if (!strict) return { strict: false, threshold: null, reason: `${why}strict has no figures (npm run cache:calibrate -- --strict)` };
  const worst = strict.sets.reduce((w, s) => (s.precision < w.precision ? s : w));
  const pairs = strict.sets.reduce((n, s) => n + s.pairs, 0);
  const on = `precision ${worst.precision.toFixed(3)} on the least precise of ${strict.sets.length} sets its rules never saw (${worst.set}; ${pairs} pairs in all)`;
  if (!strict.offered) return { strict: false, threshold: null, reason: `${why}strict not offered: ${on}, below its promise ${strict.promise}` };
  return { strict: true, threshold: null, reason: `${why}strict: the same question only, ${on}` };
};

/**
 * The active setting, or why the cache is off (said once at start). `strict` needs no calibration; a
 * similarity profile whose precision on the unseen set misses its promise is not offered, and strict
 * serves instead. `verify` (SEMANTIC_CACHE_VERIFY=model): similar questions are candidates that a model
 * confirms, from the calibrated permissive threshold (or the floor, for an embedder with no calibration).
 */
export function settingFor(
  profile: CacheProfile,
  modelId: string,
  calibrations: Record<string, ModelCalibration>,
  strict: StrictFigures | null,
  verify = false,
): CacheSetting {
  if (profile === 'off') return { strict: false, threshold: null, reason: 'SEMANTIC_CACHE_PROFILE=off' };
  const calibration = calibrations[modelId];
  if (profile !== 'strict') {
    const p = calibration?.[profile];
    if (!p) return strictSetting(strict, `${profile}: no calibration for embedding model ${modelId} (npm run cache:calibrate); `);
    if (!p.offered) return strictSetting(strict, `${profile} not offered for ${modelId}: ${figures(p.unseen, `written after the rules (${calibration!.unseen.set})`)}, below its promise ${PROFILE_PRECISION[profile]}; `);
    const base = strictSetting(strict);
    return { strict: base.strict, threshold: p.threshold, reason: `${profile}: threshold ${p.threshold.toFixed(4)}, ${figures(p.unseen, `written after the rules (${calibration!.unseen.set})`)}` };
  }
  const base = strictSetting(strict);
  if (!verify || !base.strict) return base;
  const threshold = calibration?.permissive.threshold ?? MIN_THRESHOLD;
  return { ...base, threshold, reason: `${base.reason}; similar questions from ${threshold.toFixed(4)} confirmed by the model (SEMANTIC_CACHE_VERIFY=model)` };
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

/**
 * A pair with its cosine similarity, whether the near-miss guard lets it through, whether its strict keys are
 * equal (the same question), and whether it is about health (never served).
 */
export interface ScoredPair extends LabelledPair {
  similarity: number;
  guarded: boolean;
  strict: boolean;
  health: boolean;
}

export function scorePairs(pairs: LabelledPair[], similarity: number[]): ScoredPair[] {
  return pairs.map((p, i) => {
    const health = isHealthQuestion(p.a) || isHealthQuestion(p.b);
    return { ...p, similarity: similarity[i]!, health, strict: !health && strictKey(p.a) === strictKey(p.b), guarded: !health && guardsAgree(questionGuard(p.a), questionGuard(p.b)) };
  });
}

/** A similar question the cache may serve: not about health, similarity at or above the threshold AND the guard. */
export const isCandidate = (p: ScoredPair, threshold: number) => p.similarity >= threshold && p.guarded;
/** The whole hit decision of a similarity profile, as the cache takes it: the same question, or a candidate. */
export const isHit = (p: ScoredPair, threshold: number) => p.strict || isCandidate(p, threshold);

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
/** `aggressive` trades that second check for hits: its threshold may fall this low, never to where any vector passes. */
export const AGGRESSIVE_MIN_THRESHOLD = 0.15;
const FLOOR: Record<SimilarityProfile, number> = { permissive: MIN_THRESHOLD, aggressive: AGGRESSIVE_MIN_THRESHOLD };

/** The lowest threshold (not below `floor`) whose decision reaches `target` precision on `pairs`. */
export function pickThreshold(pairs: ScoredPair[], target: number, floor = MIN_THRESHOLD): number {
  const candidates = [...new Set(pairs.map((p) => p.similarity))].sort((x, y) => x - y);
  const lowest = candidates.find((t) => score(pairs, t).precision >= target);
  // No threshold reaches it: one above every pair, which never hits.
  if (lowest === undefined) return (candidates.at(-1) ?? 1) + 1e-6;
  // Raised to the least similar paraphrase it lets through: the same hits on these pairs, and a
  // margin against near-misses the guard does not know (it is often the guard alone that decides).
  let raised = Infinity;
  for (const p of pairs) if (p.same && isHit(p, lowest)) raised = Math.min(raised, p.similarity);
  return Math.max(floor, raised === Infinity ? lowest : raised);
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
  const profile = (name: SimilarityProfile): ProfileCalibration => {
    const threshold = pickThreshold(train, PROFILE_PRECISION[name], FLOOR[name]);
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
    permissive: profile('permissive'),
    aggressive: profile('aggressive'),
    pairs: pairs.length,
  };
}

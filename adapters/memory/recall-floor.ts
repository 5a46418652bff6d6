import { z } from 'zod';
import { normalizeQuestion } from '../../machines/french/words.ts';
import {
  isHeldOutKey,
  KindScore,
  readCalibrationFile,
  Score,
  score,
  scoreByKind,
  splitPairs,
  writeCalibrationFile,
  type LabelledPair,
  type ScoredPair,
} from '../semantic-cache/semantic-cache-calibration.ts';

/**
 * Recall's relevance floor, calibrated per embedding model with the semantic cache's mechanism
 * (labelled pairs, a fixed held-out split, a per-model JSON file, figures held out): here a pair
 * is a senior's turn (`a`) and one of their stored facts (`b`), `same` when the fact answers it.
 */
export const DEFAULT_RECALL_FLOOR_FILE = new URL('./recall-floor.calibration.json', import.meta.url);

/**
 * By question, not by pair: a question's pairs (its answer and the senior's other facts) all fall
 * on one side, so the held-out figures are for turns the floor was never tuned on.
 */
export const RECALL_SPLIT_METHOD =
  'fixed held-out split by turn: all the pairs of a turn are held out when the first 32 bits of sha256(its normalised text) mod 10 < 3';
export const RECALL_FLOOR_RULE = 'the floor with the best F1 of relevant facts kept (precision and recall weighed alike) on the tuning pairs';

export const isHeldOutTurn = (pair: Pick<LabelledPair, 'a'>) => isHeldOutKey(normalizeQuestion(pair.a));

/**
 * What a search does with a turn, as the runtime runs it: the senior's facts ranked, the top
 * `RECALL_TOP` kept, then the floor. A turn given at least one fact is labelled `flux: "recall"`.
 */
const TurnScore = z.object({
  turns: z.number().int(),
  /** Turns one of the senior's facts answers, and those whose answer is among the facts kept. */
  withAnswer: z.number().int(),
  answerKept: z.number().int(),
  /** Turns no fact answers (small talk, a topic never told), and those given no fact at all. */
  withoutAnswer: z.number().int(),
  givenNothing: z.number().int(),
  factsKept: z.number().int(),
  unrelatedKept: z.number().int(),
});
export type TurnScore = z.infer<typeof TurnScore>;
/** The search's limit in a turn (RECALL_LIMIT in adapters/fluxes/memory-flux.adapter.ts). */
export const RECALL_TOP = 5;

const RecallFloorCalibration = z.object({
  split: z.object({ method: z.string(), tuning: z.number().int(), heldOut: z.number().int(), tuningTurns: z.number().int(), heldOutTurns: z.number().int() }),
  rule: z.string(),
  /** Cosine similarity: a fact below it is not returned. */
  floor: z.number(),
  /** `hitRate` is recall: the share of relevant pairs the floor keeps; `precision` the share of kept pairs that are relevant. */
  tuning: Score,
  heldOut: Score,
  /** The same held-out pairs with no floor (every fact kept): what the floor is measured against. */
  heldOutNoFloor: Score,
  heldOutByKind: z.record(z.string(), KindScore),
  /** Held-out turns searched as in the runtime (top 5, then the floor), with the floor and without. */
  heldOutTurns: z.object({ floor: TurnScore, noFloor: TurnScore }),
  /** Whether the floor beats no floor on the held-out pairs (F1); not offered, recall runs without one. */
  offered: z.boolean(),
  pairs: z.number().int(),
  calibratedAt: z.string(),
});
export type RecallFloorCalibration = z.infer<typeof RecallFloorCalibration>;

export function readRecallFloors(file: URL | string = DEFAULT_RECALL_FLOOR_FILE): Record<string, RecallFloorCalibration> {
  return readCalibrationFile(file, RecallFloorCalibration);
}

export function writeRecallFloor(modelId: string, calibration: RecallFloorCalibration, file: URL | string = DEFAULT_RECALL_FLOOR_FILE): void {
  writeCalibrationFile(file, RecallFloorCalibration, modelId, calibration);
}

export const f1 = (s: Score) => (s.precision + s.hitRate === 0 ? 0 : (2 * s.precision * s.hitRate) / (s.precision + s.hitRate));

/**
 * A fact is kept on similarity alone: the cache's near-miss guard compares two questions, not a
 * question and a fact, and its health refusal is the cache's (recall hands health facts to the agent).
 */
export function scoreRecallPairs(pairs: LabelledPair[], similarity: number[]): ScoredPair[] {
  return pairs.map((p, i) => ({ ...p, similarity: similarity[i]!, guarded: true, strict: false, health: false }));
}

/** The similarity with the best F1 on `pairs` (the lowest among equals: it keeps the most facts). */
export function pickFloor(pairs: ScoredPair[]): number {
  const candidates = [...new Set(pairs.filter((p) => p.same).map((p) => p.similarity))].sort((x, y) => x - y);
  let best = { floor: -1, f1: f1(score(pairs, -1)) };
  for (const floor of candidates) {
    const measured = f1(score(pairs, floor));
    if (measured > best.f1) best = { floor, f1: measured };
  }
  return best.floor;
}

/** Each turn's pairs (the senior's facts) ranked, the top `RECALL_TOP` kept, then the floor. */
export function scoreTurns(pairs: ScoredPair[], floor: number): TurnScore {
  const byTurn = new Map<string, ScoredPair[]>();
  for (const p of pairs) byTurn.set(p.a, [...(byTurn.get(p.a) ?? []), p]);
  const out: TurnScore = { turns: byTurn.size, withAnswer: 0, answerKept: 0, withoutAnswer: 0, givenNothing: 0, factsKept: 0, unrelatedKept: 0 };
  for (const facts of byTurn.values()) {
    const kept = [...facts].sort((x, y) => y.similarity - x.similarity).slice(0, RECALL_TOP).filter((p) => p.similarity >= floor);
    out.factsKept += kept.length;
    out.unrelatedKept += kept.filter((p) => !p.same).length;
    if (facts.some((p) => p.same)) {
      out.withAnswer += 1;
      if (kept.some((p) => p.same)) out.answerKept += 1;
    } else {
      out.withoutAnswer += 1;
      if (kept.length === 0) out.givenNothing += 1;
    }
  }
  return out;
}

export function calibrateRecallFloor(pairs: LabelledPair[], similarity: number[]): Omit<RecallFloorCalibration, 'calibratedAt'> {
  const { train, heldOut } = splitPairs(scoreRecallPairs(pairs, similarity), isHeldOutTurn);
  const floor = pickFloor(train);
  const measured = score(heldOut, floor);
  const noFloor = score(heldOut, -Infinity);
  const turns = (ps: ScoredPair[]) => new Set(ps.map((p) => p.a)).size;
  return {
    split: { method: RECALL_SPLIT_METHOD, tuning: train.length, heldOut: heldOut.length, tuningTurns: turns(train), heldOutTurns: turns(heldOut) },
    rule: RECALL_FLOOR_RULE,
    floor,
    tuning: score(train, floor),
    heldOut: measured,
    heldOutNoFloor: noFloor,
    heldOutByKind: scoreByKind(heldOut, floor),
    heldOutTurns: { floor: scoreTurns(heldOut, floor), noFloor: scoreTurns(heldOut, -Infinity) },
    offered: measured.hits > measured.falseHits && f1(measured) > f1(noFloor),
    pairs: pairs.length,
  };
}

/** `RECALL_MIN_SIMILARITY`: the calibrated floor of the embedding model, none, or a number that overrides it. */
export type RecallFloorSetting = 'calibrated' | 'off' | number;

const figures = (c: RecallFloorCalibration) =>
  `held-out precision ${c.heldOut.precision.toFixed(3)}, recall ${c.heldOut.hitRate.toFixed(3)} on ${c.split.heldOutTurns} held-out turns (no floor: precision ${c.heldOutNoFloor.precision.toFixed(3)})`;

/** The floor recall applies, or null (every search keeps its top 5), and why, for the start banner. */
export function recallFloorFor(setting: RecallFloorSetting, modelId: string, calibrations: Record<string, RecallFloorCalibration>): { floor: number | null; reason: string } {
  if (typeof setting === 'number') return { floor: setting, reason: `similarity ≥ ${setting} (RECALL_MIN_SIMILARITY, not calibrated)` };
  if (setting === 'off') return { floor: null, reason: 'none — RECALL_MIN_SIMILARITY=off: every search keeps its top 5' };
  const calibration = calibrations[modelId];
  if (!calibration) return { floor: null, reason: `none — no calibration for embedding model ${modelId} (npm run recall:calibrate): every search keeps its top 5` };
  if (!calibration.offered) return { floor: null, reason: `none — the floor for ${modelId} does not beat no floor: ${figures(calibration)}` };
  return { floor: calibration.floor, reason: `similarity ≥ ${calibration.floor.toFixed(4)}, ${figures(calibration)}` };
}

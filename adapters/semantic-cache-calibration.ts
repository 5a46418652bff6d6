import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { detailsAgree, questionDetails } from '../machines/question-details.ts';

export const CACHE_PROFILES = ['strict', 'permissive', 'aggressive', 'off'] as const;
export type CacheProfile = (typeof CACHE_PROFILES)[number];
/** The precision each profile's threshold must reach on the labelled pairs. */
export const PROFILE_PRECISION: Record<Exclude<CacheProfile, 'off'>, number> = { strict: 0.99, permissive: 0.95, aggressive: 0.9 };

export const DEFAULT_CALIBRATION_FILE = new URL('./semantic-cache.calibration.json', import.meta.url);

const Measured = z.object({ threshold: z.number(), precision: z.number(), hitRate: z.number() });
const ModelCalibration = z.object({
  strict: Measured,
  permissive: Measured,
  aggressive: Measured,
  pairs: z.number().int(),
  calibratedAt: z.string(),
});
const CalibrationFile = z.record(z.string(), ModelCalibration);
export type ModelCalibration = z.infer<typeof ModelCalibration>;

export const LabelledPair = z.object({ a: z.string().min(1), b: z.string().min(1), same: z.boolean() });
export type LabelledPair = z.infer<typeof LabelledPair>;

export function readCalibrations(file: URL | string = DEFAULT_CALIBRATION_FILE): Record<string, ModelCalibration> {
  try {
    return CalibrationFile.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

export function writeCalibration(modelId: string, calibration: ModelCalibration, file: URL | string = DEFAULT_CALIBRATION_FILE): void {
  const all = readCalibrations(file);
  all[modelId] = calibration;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}

/** The active threshold, or why there is none (the cache then runs off, said once at start). */
export function thresholdFor(profile: CacheProfile, modelId: string, calibrations: Record<string, ModelCalibration>): { threshold: number | null; reason: string } {
  if (profile === 'off') return { threshold: null, reason: 'SEMANTIC_CACHE_PROFILE=off' };
  const calibration = calibrations[modelId];
  if (!calibration) return { threshold: null, reason: `no calibration for embedding model ${modelId} (npm run cache:calibrate)` };
  const measured = calibration[profile];
  return { threshold: measured.threshold, reason: `${profile}: threshold ${measured.threshold.toFixed(4)}, precision ${measured.precision.toFixed(3)} on ${calibration.pairs} pairs` };
}

/**
 * For each profile, the lowest threshold whose whole hit decision — similarity at or above
 * it AND the near-miss guard — reaches the profile's precision on the pairs, which gives the
 * highest hit rate at that precision. `similarity[i]` is the cosine of pair i's two questions.
 */
export function calibrate(pairs: LabelledPair[], similarity: number[]): Omit<ModelCalibration, 'calibratedAt'> {
  const guarded = pairs.map((p) => detailsAgree(questionDetails(p.a), questionDetails(p.b)));
  const positives = pairs.filter((p) => p.same).length;
  const candidates = [...new Set(similarity)].sort((x, y) => x - y);
  const measure = (threshold: number) => {
    let hits = 0;
    let correct = 0;
    pairs.forEach((p, i) => {
      if (similarity[i]! >= threshold && guarded[i]) {
        hits += 1;
        if (p.same) correct += 1;
      }
    });
    return { threshold, precision: hits === 0 ? 1 : correct / hits, hitRate: positives === 0 ? 0 : correct / positives };
  };
  const pick = (target: number) => {
    for (const t of candidates) {
      const m = measure(t);
      if (m.precision >= target) return m;
    }
    // No threshold reaches it: one above every pair, which never hits.
    return measure((candidates.at(-1) ?? 1) + 1e-6);
  };
  return { strict: pick(PROFILE_PRECISION.strict), permissive: pick(PROFILE_PRECISION.permissive), aggressive: pick(PROFILE_PRECISION.aggressive), pairs: pairs.length };
}

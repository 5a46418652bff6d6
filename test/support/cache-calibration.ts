import { createHash } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readCalibrations, SIMILARITY_PROFILES } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';

/**
 * The calibration the tests of the semantic cache's behaviour run on: the shipped thresholds, each
 * profile offered. The shipped calibration offers none for the local embedder — its precision on the
 * pairs written after the rules misses every promise (docs/semantic-cache.md), so a runtime on it runs
 * with the cache off — while what those tests check is what the cache does at its threshold.
 * Written under the system's temporary folder, named after its content: the test processes share it.
 */
let file: string | null = null;
export function offeredCalibrationFile(): string {
  if (file) return file;
  const offered = Object.fromEntries(
    Object.entries(readCalibrations()).map(([model, calibration]) => [
      model,
      { ...calibration, unseen: { ...calibration.unseen, set: 'a test fixture: the shipped thresholds, offered' }, ...Object.fromEntries(SIMILARITY_PROFILES.map((p) => [p, { ...calibration[p], offered: true }])) },
    ]),
  );
  const text = JSON.stringify(offered);
  file = path.join(tmpdir(), `kohami-test-calibration-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`);
  if (!existsSync(file)) {
    // Whole or absent for the other test processes reading it.
    writeFileSync(`${file}.${process.pid}`, text);
    renameSync(`${file}.${process.pid}`, file);
  }
  return file;
}

import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { readCalibrations, readStrictFigures, settingFor } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import { repoFile } from '../support/manifests.ts';

/**
 * The semantic cache's figures as the README and docs/semantic-cache.md quote them are the shipped
 * ones: the banner line each prints is the one the runtime prints on its embedded defaults, and the
 * prose gives the same precision and hit rates — not an earlier run's.
 */

const modelId = new LocalHashEmbedder().modelId;
const calibration = readCalibrations()[modelId]!;
const strict = readStrictFigures()!;
const repeats = strict.sets.find((s) => s.set === 'calibration/repeats.fr.jsonl')!;

describe('the semantic cache figures the docs quote', () => {
  it('the banner line in the README and in docs/semantic-cache.md is the runtime’s, word for word', () => {
    const { reason } = settingFor('strict', modelId, readCalibrations(), strict);
    for (const file of ['README.md', 'docs/semantic-cache.md']) expect(repoFile(file), file).toContain(`semantic cache:   ${reason}\n`);
  });

  it('the README’s prose gives strict’s hit rate on the repeats and the guard’s precision on the unseen set', () => {
    const readme = repoFile('README.md').replace(/\s+/g, ' ');
    expect(/its keys match (\d+) % of realistic same-day repeats/.exec(readme)?.[1]).toBe(String(Math.round(repeats.hitRate * 100)));
    expect(/the guard reaches (0\.\d{3})/.exec(readme)?.[1]).toBe(calibration.permissive.unseen.precision.toFixed(3));
  });

  it('docs/semantic-cache.md gives strict’s row for every set, and the similarity profiles’ unseen figures', () => {
    const doc = repoFile('docs/semantic-cache.md');
    for (const s of strict.sets) expect(doc).toContain(`| \`${s.set}\` | ${s.pairs} | ${s.precision.toFixed(3)} | ${s.hitRate.toFixed(3)} | ${(s.hitRateOutsideHealth ?? 0).toFixed(3)} | ${s.falseHits} of ${s.hits} |`);
    for (const profile of ['permissive', 'aggressive'] as const) {
      const p = calibration[profile];
      const row = doc.split('\n').find((line) => line.startsWith(`| ${profile} | ${p.threshold.toFixed(4)} |`));
      expect(row, profile).toContain(`**${p.unseen.precision.toFixed(3)}, ${p.unseen.hitRate.toFixed(3)}, ${p.unseen.falseHits} of ${p.unseen.hits}**`);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { readCalibrations, thresholdFor } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import { repoFile } from '../support/manifests.ts';

/**
 * The semantic cache's figures as the README and docs/semantic-cache.md quote them are the shipped
 * calibration's: the banner line each prints is the one the runtime prints, and the README's prose
 * gives the same precision and hit rate — not an earlier run's.
 */

const modelId = new LocalHashEmbedder().modelId;
const calibration = readCalibrations()[modelId]!;
const strict = calibration.strict.unseen;

describe('the semantic cache figures the docs quote', () => {
  it('the banner line in the README and in docs/semantic-cache.md is the runtime’s, word for word', () => {
    const { reason } = thresholdFor('strict', modelId, readCalibrations());
    for (const file of ['README.md', 'docs/semantic-cache.md']) expect(repoFile(file), file).toContain(`semantic cache:   off — ${reason}\n`);
  });

  it('the README’s prose gives the shipped precision and hit rate on the unseen set', () => {
    const readme = repoFile('README.md').replace(/\s+/g, ' ');
    expect(/strict precision is (0\.\d{3})/.exec(readme)?.[1]).toBe(strict.precision.toFixed(3));
    expect(/serves (\d+) % of real paraphrases/.exec(readme)?.[1]).toBe(String(Math.round(strict.hitRate * 100)));
  });

  it('docs/semantic-cache.md’s calibration table gives them too, with its false hits', () => {
    const row = repoFile('docs/semantic-cache.md').split('\n').find((line) => line.startsWith('| strict | '));
    expect(row).toContain(`**${strict.precision.toFixed(3)}, ${strict.hitRate.toFixed(3)}, ${strict.falseHits} of ${strict.hits}**`);
  });
});

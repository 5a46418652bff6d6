import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { duplicateDistanceFor, sameFactWording, UNCALIBRATED_DUPLICATE_DISTANCE } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { cosineDistance } from '../support/embeddings.ts';

/**
 * The store's "same meaning" rule on facts (PgVectorMemoryAdapter.persist): within the model's
 * duplicate distance AND agreed by the near-miss guard. A false merge loses a fact (it is taken for
 * one already held), a missed one only stores a copy: on these labelled French fact pairs, the
 * local embedder's default merges no two different facts.
 */
const DIFFERENT: Array<[string, string, string]> = [
  ['place', 'Sa fille Claire vit à Lyon.', 'Sa fille Claire vit à Nantes.'],
  ['person', 'Son fils Paul vit à Lyon.', 'Sa fille Claire vit à Lyon.'],
  ['negation', 'Elle aime les fraises.', "Elle n'aime pas les fraises."],
  ['quantity', 'Elle a deux petits-enfants.', 'Elle a trois petits-enfants.'],
  ['time', 'Elle prend son traitement le matin.', 'Elle prend son traitement le soir.'],
  ['day', 'Sa fille lui rend visite le dimanche.', 'Sa fille lui rend visite le mercredi.'],
  ['object', 'Elle aime le tricot.', 'Elle aime le jardinage.'],
  ['relation', 'Sa sœur Lucie habite à Paris.', 'Sa voisine Lucie habite à Paris.'],
  ['number', 'Elle a 82 ans.', 'Elle a 85 ans.'],
  ['name', 'Son chat s’appelle Minou.', 'Son chat s’appelle Félix.'],
  ['health', 'Elle porte des lunettes pour lire.', 'Elle porte un appareil auditif.'],
  ['place', 'Elle est née à Marseille.', 'Elle est née à Toulon.'],
];
const SAME: Array<[string, string, string]> = [
  // A copy in other case (« sa fille claire vit à lyon ») is the content key's to catch (kohami_fact_key, in SQL):
  // the guard reads a capital as a name, so « Claire » and « claire » are not the same word to it.
  ['punctuation', 'Sa fille Claire vit à Lyon.', 'Sa fille, Claire, vit à Lyon !'],
  ['synonym', 'Elle aime les fraises du marché.', 'Elle adore les fraises du marché.'],
  ['synonym', 'Elle aime le tricot.', 'Elle apprécie le tricot.'],
  ['order', 'Le dimanche, sa fille lui rend visite.', 'Sa fille lui rend visite le dimanche.'],
];

const embedder = new LocalHashEmbedder();
async function merges(a: string, b: string, modelId = embedder.modelId): Promise<boolean> {
  const [va, vb] = await embedder.embed([a, b]);
  return cosineDistance(va!, vb!) <= duplicateDistanceFor(modelId) && sameFactWording(a, b);
}

describe('facts of the same meaning (FACT_DUPLICATE_DISTANCE and the near-miss guard)', () => {
  it('never merges two different facts with the local embedder’s calibrated distance', async () => {
    for (const [kind, a, b] of DIFFERENT) expect({ kind, a, b, merged: await merges(a, b) }).toEqual({ kind, a, b, merged: false });
  });

  it('merges paraphrases of one fact', async () => {
    for (const [kind, a, b] of SAME) expect({ kind, a, b, merged: await merges(a, b) }).toEqual({ kind, a, b, merged: true });
  });

  it('an uncalibrated model (mistral-embed) gets the near-identical default; the setting overrides both', () => {
    expect(duplicateDistanceFor('kohami-local-hash-v1')).toBe(0.3);
    expect(duplicateDistanceFor('mistral-embed')).toBe(UNCALIBRATED_DUPLICATE_DISTANCE);
    expect(duplicateDistanceFor('mistral-embed', 0.12)).toBe(0.12);
    expect(duplicateDistanceFor('kohami-local-hash-v1', 0)).toBe(0);
  });
});

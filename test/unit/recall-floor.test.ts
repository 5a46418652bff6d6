import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import {
  calibrateRecallFloor,
  isHeldOutTurn,
  readRecallFloors,
  recallFloorFor,
  scoreRecallPairs,
  scoreTurns,
  writeRecallFloor,
  type RecallFloorCalibration,
} from '../../adapters/memory/recall-floor.ts';
import type { LabelledPair } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import { pairSimilarities, readPairs } from '../../runtime/cli/cache-calibrate.ts';

/** A turn with its answer at `answer` and two unrelated facts at `unrelated` similarity. */
function turn(a: string, answer: number | null, unrelated: number): Array<{ pair: LabelledPair; similarity: number }> {
  const out = [
    { pair: { a, b: `${a} — autre fait 1`, same: false }, similarity: unrelated },
    { pair: { a, b: `${a} — autre fait 2`, same: false }, similarity: unrelated - 0.05 },
  ];
  if (answer !== null) out.push({ pair: { a, b: `${a} — la réponse`, same: true }, similarity: answer });
  return out;
}

/** Enough turns that both sides of the split have some; held-out turns follow `heldOut`, tuning turns `tuning`. */
function corpus(tuning: (i: number) => [number | null, number], heldOut: (i: number) => [number | null, number]) {
  const rows = [];
  for (let i = 0; i < 60; i++) {
    const a = `question numéro ${i} ?`;
    rows.push(...turn(a, ...(isHeldOutTurn({ a }) ? heldOut(i) : tuning(i))));
  }
  return { pairs: rows.map((r) => r.pair), similarity: rows.map((r) => r.similarity) };
}

describe('recall floor calibration', () => {
  it('holds out whole turns: every pair of a turn falls on the same side', () => {
    const { pairs } = corpus(() => [0.6, 0.2], () => [0.6, 0.2]);
    const result = calibrateRecallFloor(pairs, pairs.map(() => 0.5));
    expect(result.split.heldOutTurns + result.split.tuningTurns).toBe(60);
    expect(result.split.heldOut).toBe(pairs.filter(isHeldOutTurn).length);
    expect(result.split.heldOutTurns).toBeGreaterThan(5);
    expect(result.split.tuningTurns).toBeGreaterThan(30);
  });

  it('picks the floor on the tuning turns only and measures it on the held-out ones', () => {
    // Tuning: answers at 0.6, unrelated facts at 0.3 at most. Held out: answers at 0.45 — below the floor tuned above 0.3.
    const { pairs, similarity } = corpus(() => [0.6, 0.3], () => [0.45, 0.3]);
    const result = calibrateRecallFloor(pairs, similarity);
    expect(result.floor).toBe(0.6);
    expect(result.tuning).toMatchObject({ precision: 1, hitRate: 1 });
    expect(result.heldOut).toMatchObject({ hits: 0, hitRate: 0 });
    expect(result.heldOutNoFloor.hitRate).toBe(1);
    // Measured on held-out turns, it loses every answer: not offered.
    expect(result.offered).toBe(false);
  });

  it('offers a floor that beats no floor on the held-out turns, with turn figures as a search runs them', () => {
    const { pairs, similarity } = corpus(
      (i) => (i % 4 === 0 ? [null, 0.2] : [0.5, 0.25]),
      (i) => (i % 4 === 0 ? [null, 0.2] : [0.55, 0.25]),
    );
    const result = calibrateRecallFloor(pairs, similarity);
    expect(result.floor).toBe(0.5);
    expect(result.offered).toBe(true);
    expect(result.heldOut).toMatchObject({ precision: 1, hitRate: 1, falseHits: 0 });
    const { floor, noFloor } = result.heldOutTurns;
    expect(floor.answerKept).toBe(floor.withAnswer);
    expect(floor.givenNothing).toBe(floor.withoutAnswer);
    expect(floor.unrelatedKept).toBe(0);
    expect(noFloor.givenNothing).toBe(0);
  });

  it('a search keeps at most the top 5 of a turn, then the floor', () => {
    const pairs = Array.from({ length: 8 }, (_, i) => ({ a: 'q', b: `fait ${i}`, same: i === 7 }));
    const scored = scoreRecallPairs(pairs, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.05]);
    // Without a floor: the 5 most similar, the answer (the least similar) not among them.
    expect(scoreTurns(scored, -Infinity)).toMatchObject({ turns: 1, withAnswer: 1, answerKept: 0, factsKept: 5, unrelatedKept: 5 });
    expect(scoreTurns(scored, 0.55)).toMatchObject({ factsKept: 2, unrelatedKept: 2 });
  });
});

describe('the floor recall applies', () => {
  const calibration = (offered: boolean): RecallFloorCalibration => {
    const { pairs, similarity } = corpus(() => [0.5, 0.25], () => [0.5, 0.25]);
    return { ...calibrateRecallFloor(pairs, similarity), offered, calibratedAt: '2026-12-01T00:00:00Z' };
  };

  it('is the embedding model’s calibrated floor, or none — and says why', () => {
    const all = { 'model-a': calibration(true), 'model-b': calibration(false) };
    expect(recallFloorFor('calibrated', 'model-a', all)).toEqual({ floor: 0.5, reason: expect.stringMatching(/^similarity ≥ 0\.5000, held-out precision 1\.000, recall 1\.000 on \d+ held-out turns/) });
    expect(recallFloorFor('calibrated', 'model-b', all)).toEqual({ floor: null, reason: expect.stringContaining('does not beat no floor') });
    expect(recallFloorFor('calibrated', 'mistral-embed', all)).toEqual({ floor: null, reason: expect.stringContaining('no calibration for embedding model mistral-embed') });
    expect(recallFloorFor('off', 'model-a', all)).toEqual({ floor: null, reason: expect.stringContaining('RECALL_MIN_SIMILARITY=off') });
    expect(recallFloorFor(0.4, 'mistral-embed', all)).toEqual({ floor: 0.4, reason: expect.stringContaining('not calibrated') });
  });

  it('reads back what it writes, per model, and drops an entry of another format', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'recall-floor-')), 'f.json');
    await writeFile(file, JSON.stringify({ old: { floor: 0.3 } }));
    writeRecallFloor('model-a', calibration(true), file);
    const all = readRecallFloors(file);
    expect(Object.keys(all)).toEqual(['model-a']);
    expect(all['model-a']!.floor).toBe(0.5);
    expect(readRecallFloors(path.join(path.dirname(file), 'missing.json'))).toEqual({});
  });

  it('the shipped French pairs and the shipped floor of the local embedder: recalibrating gives the same figures', async () => {
    const shipped = readPairs('calibration/recall-pairs.fr.jsonl');
    expect(shipped.length).toBeGreaterThanOrEqual(1500);
    expect(shipped.filter((p) => p.same).length).toBeGreaterThanOrEqual(100);
    expect(new Set(shipped.map((p) => p.kind))).toEqual(new Set(['answers', 'unrelated', 'small_talk', 'untold']));
    const embedder = new LocalHashEmbedder();
    const { calibratedAt: _, ...stored } = readRecallFloors()[embedder.modelId]!;
    expect(calibrateRecallFloor(shipped, await pairSimilarities(embedder, shipped))).toEqual(stored);
    expect(stored.offered).toBe(true);
    expect(stored.heldOut.precision).toBeGreaterThan(stored.heldOutNoFloor.precision * 5);
  });
});

import { MockEmbeddingModelV4 } from 'ai/test';
import { AiSdkEmbedder } from '../../adapters/embedders/ai-sdk-embedder.ts';

const DIMS = 1024;

/** A unit vector with the given weights per dimension (the rest zero). */
export function unit(weights: Record<number, number>): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const [i, w] of Object.entries(weights)) v[Number(i)] = w;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function hashed(text: string): number[] {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return unit({ [500 + (h % 500)]: 1 });
}

/**
 * An AI SDK mock embedding model that places chosen sentences on chosen axes
 * (weights per dimension); any other text gets its own far-away axis.
 */
export function topicEmbedder(placements: Record<string, Record<number, number>>, modelId = 'test-topics') {
  const model = new MockEmbeddingModelV4({
    maxEmbeddingsPerCall: 100,
    doEmbed: async ({ values }) => ({ embeddings: values.map((v) => (placements[v] ? unit(placements[v]) : hashed(v))), warnings: [] }),
  });
  return Object.assign(new AiSdkEmbedder(model, modelId), { mock: model });
}

/** Deterministic pseudo-random unit vectors (mulberry32 + Box-Muller). */
export function randomUnitVectors(count: number, seed: number): number[][] {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () => {
    const v = Array.from({ length: DIMS }, () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand()));
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

export const cosineDistance = (a: number[], b: number[]) => 1 - a.reduce((sum, x, i) => sum + x * b[i]!, 0);

import { EMBEDDING_DIMENSIONS, type MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';

/**
 * The offline default: feature hashing of words and character trigrams into 1024
 * signed buckets, L2-normalised. Deterministic and never degenerate; lexical, not
 * semantic (« fille » is near « fille », not near « enfant »).
 */
export class LocalHashEmbedder implements MemoryEmbedderPort {
  readonly modelId = 'kohami-local-hash-v1';

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map(localHashVector);
  }
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function features(text: string): string[] {
  const words = text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  const out: string[] = [];
  for (const word of words) {
    out.push(`w:${word}`);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) out.push(`t:${padded.slice(i, i + 3)}`);
  }
  return out;
}

/** One text's vector, synchronously (a fake embeddings server serves these in benchmarks). */
export function localHashVector(text: string): number[] {
  const vector = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const feature of features(text)) {
    const hash = fnv1a(feature);
    vector[hash % EMBEDDING_DIMENSIONS]! += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1; // no word at all: a fixed direction, still a valid cosine target
    return vector;
  }
  return vector.map((x) => x / norm);
}

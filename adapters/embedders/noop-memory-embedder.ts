import { EMBEDDING_DIMENSIONS, type MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';

/** The seed's dev-local embedder: the zero vector, which sends every search to the chronological fallback. */
export class NoopMemoryEmbedder implements MemoryEmbedderPort {
  readonly modelId = 'noop-zero';

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map(() => new Array<number>(EMBEDDING_DIMENSIONS).fill(0));
  }
}

import type { EmbeddingModelV4 } from '@ai-sdk/provider';
import { embedMany } from 'ai';
import { EMBEDDING_DIMENSIONS, type MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { EMBED_TIMEOUT_MS, MistralEmbedClientDimsMismatchError } from './mistral-embed-client.ts';

/**
 * Any AI SDK embedding model as a MemoryEmbedderPort, with the Mistral client's contract: `embedMany`
 * splits large batches by the provider's per-call limit, and a response of the wrong width is refused
 * (a silent upstream model swap would otherwise make the HNSW index incoherent). Mistral's own
 * embeddings go through `MistralEmbedClient`, which is leaner per call; this adapter plugs in any other
 * AI SDK provider, and the tests' `MockEmbeddingModelV4`. A 429's Retry-After is the AI SDK's to honour:
 * its one retry waits what the header asks (up to a minute), within `timeoutMs`.
 */
export class AiSdkEmbedder implements MemoryEmbedderPort {
  private readonly model: EmbeddingModelV4;
  readonly modelId: string;
  private readonly timeoutMs: number;

  constructor(
    model: EmbeddingModelV4,
    modelId: string,
    /** No embedding request stays open longer, whoever asked for it (a hung provider would pile up sockets). */
    timeoutMs = EMBED_TIMEOUT_MS,
  ) {
    this.model = model;
    this.modelId = modelId;
    this.timeoutMs = timeoutMs;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const abortSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const { embeddings } = await embedMany({ model: this.model, values: texts, maxRetries: 1, abortSignal });
    for (const vector of embeddings) {
      if (vector.length !== EMBEDDING_DIMENSIONS) throw new MistralEmbedClientDimsMismatchError(this.modelId, vector.length);
    }
    return embeddings;
  }
}

import { MockEmbeddingModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AiSdkEmbedder, MistralEmbedClientDimsMismatchError } from '../../adapters/embedders/ai-sdk-embedder.ts';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { MistralEmbedClient } from '../../adapters/embedders/mistral-embed-client.ts';
import { NoopMemoryEmbedder } from '../../adapters/embedders/noop-memory-embedder.ts';
import { isDegenerateVector } from '../../machines/memory.port.ts';
import { InvalidMistralBaseUrlError } from '../../runtime/config.ts';
import { cosineDistance } from '../support/embeddings.ts';
import { FakeMistral } from '../support/fake-mistral.ts';

describe('isDegenerateVector', () => {
  it('flags empty, all-zero and non-finite vectors, and nothing else', () => {
    expect(isDegenerateVector([])).toBe(true);
    expect(isDegenerateVector(undefined)).toBe(true);
    expect(isDegenerateVector([0, 0, 0])).toBe(true);
    expect(isDegenerateVector([0, Number.NaN])).toBe(true);
    expect(isDegenerateVector([0, 0.001])).toBe(false);
  });
});

describe('LocalHashEmbedder (offline default)', () => {
  const embedder = new LocalHashEmbedder();

  it('is deterministic, 1024-d, unit-length and never degenerate, with its own model id', async () => {
    const [a, b, empty] = await embedder.embed(['Ma fille Claire', 'Ma fille Claire', '…']);
    expect(a).toEqual(b);
    expect(a).toHaveLength(1024);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 6);
    expect(isDegenerateVector(empty)).toBe(false);
    expect(embedder.modelId).toBe('kohami-local-hash-v1');
  });

  it('is lexical: shared words (accents folded) bring texts closer than unrelated ones', async () => {
    const [q, near, far] = await embedder.embed(['ma fille passe ce week-end', 'sa fille Claire habite à Lyon', 'il aime le jardinage']);
    expect(cosineDistance(q!, near!)).toBeLessThan(cosineDistance(q!, far!));
  });
});

describe('NoopMemoryEmbedder', () => {
  it('emits the zero vector (the seed’s dev-local behaviour)', async () => {
    const [v] = await new NoopMemoryEmbedder().embed(['x']);
    expect(v).toHaveLength(1024);
    expect(isDegenerateVector(v)).toBe(true);
  });
});

describe('AiSdkEmbedder', () => {
  it('refuses a response that is not 1024-d (MistralEmbedClientDimsMismatchError)', async () => {
    const model = new MockEmbeddingModelV3({ doEmbed: async ({ values }) => ({ embeddings: values.map(() => [0.1, 0.2]), warnings: [] }) });
    await expect(new AiSdkEmbedder(model, 'm').embed(['a'])).rejects.toThrow(MistralEmbedClientDimsMismatchError);
  });
});

describe('MistralEmbedClient, the real @ai-sdk/mistral adapter against a local fake Mistral', () => {
  let mistral: FakeMistral;
  beforeAll(async () => {
    mistral = await new FakeMistral().start();
  });
  afterAll(() => mistral.stop());

  it('checks the base URL against the EU whitelist at construction (INV-T02)', () => {
    expect(() => new MistralEmbedClient({ apiKey: 'k', baseUrl: 'https://api.example.com/v1', env: 'development' })).toThrow(InvalidMistralBaseUrlError);
    expect(() => new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'production' })).toThrow(InvalidMistralBaseUrlError);
  });

  it('embeds many texts in batches with mistral-embed', async () => {
    const client = new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
    const texts = Array.from({ length: 40 }, (_, i) => `fait numéro ${i}`);
    const before = mistral.requests.length;
    const vectors = await client.embed(texts);
    expect(vectors).toHaveLength(40);
    expect(vectors.every((v) => v.length === 1024)).toBe(true);
    const calls = mistral.requests.slice(before);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.every((c) => c.path === '/v1/embeddings' && c.body.model === 'mistral-embed')).toBe(true);
    expect(client.modelId).toBe('mistral-embed');
  });

  it('throws MistralEmbedClientDimsMismatchError when the upstream model changes width', async () => {
    mistral.embeddingDims = 768;
    try {
      await expect(new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' }).embed(['a'])).rejects.toThrow(MistralEmbedClientDimsMismatchError);
    } finally {
      mistral.embeddingDims = 1024;
    }
  });
});

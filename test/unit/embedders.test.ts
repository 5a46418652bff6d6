import { MockEmbeddingModelV4 } from 'ai/test';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AiSdkEmbedder } from '../../adapters/embedders/ai-sdk-embedder.ts';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { MistralEmbedClient, MistralEmbedClientDimsMismatchError, MistralEmbedHttpError, MistralEmbedThrottledError } from '../../adapters/embedders/mistral-embed-client.ts';
import { NoopMemoryEmbedder } from '../../adapters/embedders/noop-memory-embedder.ts';
import { isDegenerateVector } from '../../machines/memory/memory.port.ts';
import { InvalidMistralBaseUrlError } from '../../adapters/mistral/base-url.ts';
import { expectContractViolations } from '../support/contract-violations.ts';
import { cosineDistance } from '../support/embeddings.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { ioTurns, untilIo } from '../support/io-turns.ts';

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
    const model = new MockEmbeddingModelV4({ doEmbed: async ({ values }) => ({ embeddings: values.map(() => [0.1, 0.2]), warnings: [] }) });
    await expect(new AiSdkEmbedder(model, 'm').embed(['a'])).rejects.toThrow(MistralEmbedClientDimsMismatchError);
  });
});

describe('MistralEmbedClient, the runtime’s lean mistral-embed client, against a local fake Mistral', () => {
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
  it('sends what the AI SDK sends (model, inputs, float encoding, the key) and hands the vectors back in input order', async () => {
    const client = new MistralEmbedClient({ apiKey: 'k', baseUrl: `${mistral.baseUrl}/`, env: 'test' });
    const before = mistral.requests.length;
    const [a, b, again] = await client.embed(['ma fille Claire', 'le jardin', 'ma fille Claire']);
    expect(mistral.requests.slice(before)).toEqual([{ path: '/v1/embeddings', body: { model: 'mistral-embed', input: ['ma fille Claire', 'le jardin', 'ma fille Claire'], encoding_format: 'float' }, authorization: 'Bearer k' }]);
    expect(a).toEqual(again);
    expect(a).not.toEqual(b);
  });

  it('keeps its connection alive between requests (one socket for sequential calls)', async () => {
    const client = new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
    const before = mistral.connections;
    for (let i = 0; i < 5; i++) await client.embed([`question ${i}`]);
    expect(mistral.connections - before).toBe(1);
  });

  it('an error status is a MistralEmbedHttpError without the body; 400 is not retried', async () => {
    mistral.embeddingStatus = 400;
    const before = mistral.requests.length;
    try {
      const err = await new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' }).embed(['a']).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MistralEmbedHttpError);
      expect(err).toMatchObject({ status: 400, retryable: false, message: 'mistral embeddings answered HTTP 400' });
      expect(mistral.requests.length - before).toBe(1);
    } finally {
      mistral.embeddingStatus = 200;
    }
  });

  it('a 503 is retried once, then fails', async () => {
    mistral.embeddingStatus = 503;
    const before = mistral.requests.length;
    try {
      await expect(new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' }).embed(['a'])).rejects.toMatchObject({ status: 503, retryable: true });
      expect(mistral.requests.length - before).toBe(2);
    } finally {
      mistral.embeddingStatus = 200;
    }
  });

  describe('rate-limited (429, Retry-After: 1)', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      mistral.behaviours.add('rate-limited');
    });
    afterEach(() => {
      vi.useRealTimers();
      mistral.behaviours.clear();
      mistral.rateLimitRetryAfter = '1';
    });

    it('the one retry waits the Retry-After, and a call made meanwhile waits for the pause’s end: no request before it', async () => {
      const client = new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
      const before = mistral.requests.length;
      const settled: string[] = [];
      const first = client.embed(['a']).finally(() => settled.push('first'));
      await untilIo(() => client.pauseMs > 0);
      expect(client.pauseMs).toBe(1000);
      const second = client.embed(['b']).finally(() => settled.push('second'));
      await vi.advanceTimersByTimeAsync(999);
      await ioTurns();
      expect(mistral.requests.length - before).toBe(1);
      expect(settled).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect((await first)[0]).toHaveLength(1024);
      expect((await second)[0]).toHaveLength(1024);
      expect(mistral.requests.length - before).toBe(3);
    });

    it('a pause longer than the call’s time bound: the 429 fails the call at once, and a call meanwhile fails unsent', async () => {
      mistral.rateLimitRetryAfter = '30';
      const client = new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
      const before = mistral.requests.length;
      await expect(client.embed(['a'])).rejects.toMatchObject({ status: 429, retryable: true });
      expect(client.pauseMs).toBe(30_000);
      await expect(client.embed(['b'])).rejects.toThrow(MistralEmbedThrottledError);
      expect(mistral.requests.length - before).toBe(1);
    });
  });

  it('an abort rejects with its reason and drops the request’s connection; so does the call’s own time bound', async () => {
    mistral.embeddingStatus = 'hang';
    try {
      const client = new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
      const controller = new AbortController();
      const pending = client.embed(['a'], controller.signal);
      await expect.poll(() => mistral.open.embeddings).toBe(1);
      controller.abort(new Error('the turn ended'));
      await expect(pending).rejects.toThrow('the turn ended');
      await expect.poll(() => mistral.open.embeddings).toBe(0);

      const bounded = new MistralEmbedClient({ apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test', timeoutMs: 50 });
      await expect(bounded.embed(['b'])).rejects.toThrow('over 50 ms');
      await expect.poll(() => mistral.open.embeddings).toBe(0);
    } finally {
      mistral.embeddingStatus = 200;
    }
  });

  it('an answer that is not JSON, or has a vector too few, is refused', async () => {
    // Both answers break the contract on purpose (the second also lacks the list's id, object, model and usage).
    const broken = expectContractViolations();
    const server = await new FakeMistral({
      request(req, res) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(req.url?.includes('broken') ? '{"data": [' : JSON.stringify({ data: [{ embedding: new Array(1024).fill(0.5) }] }));
        return true;
      },
      upgrade: () => false,
    }).start();
    try {
      await expect(new MistralEmbedClient({ apiKey: 'k', baseUrl: `${server.baseUrl}/broken`, env: 'test' }).embed(['a'])).rejects.toThrow('not JSON');
      await expect(new MistralEmbedClient({ apiKey: 'k', baseUrl: server.baseUrl, env: 'test' }).embed(['a', 'b'])).rejects.toThrow('1 vectors for 2 inputs');
      expect(broken.every((v) => v.side === 'answer')).toBe(true);
      expect(broken.map((v) => v.path.join('.') || v.message)).toEqual(['not JSON', 'id', 'object', 'model', 'usage']);
    } finally {
      await server.stop();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { SharedQuestionEmbedder } from '../../adapters/embedders/shared-question-embedder.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';

const OPTIONS = { maxUses: 2, maxEntries: 8, ttlMs: 10_000, warmTimeoutMs: 5_000, maxWarming: 2 };

/** The real local embedder behind a switch: it records each request, and can fail or hang (until aborted). */
function recordingEmbedder() {
  const local = new LocalHashEmbedder();
  const state = { mode: 'ok' as 'ok' | 'fail' | 'hang', calls: [] as string[][], aborted: 0 };
  const embedder: MemoryEmbedderPort = {
    modelId: local.modelId,
    embed: (texts, signal) => {
      state.calls.push(texts);
      if (state.mode === 'fail') return Promise.reject(new Error('embedder down'));
      if (state.mode === 'hang') {
        return new Promise((_resolve, reject) =>
          signal?.addEventListener('abort', () => {
            state.aborted += 1;
            reject(signal.reason);
          }),
        );
      }
      return local.embed(texts);
    },
  };
  return { embedder, state };
}

/** Lets the promise chains of a settled request run to their end. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

let inner: ReturnType<typeof recordingEmbedder>;
let shared: SharedQuestionEmbedder;
beforeEach(() => {
  vi.useFakeTimers();
  inner = recordingEmbedder();
  shared = new SharedQuestionEmbedder(inner.embedder, OPTIONS);
});
afterEach(() => vi.useRealTimers());

describe('the question embedded once per turn', () => {
  it('keeps the model id; the turn’s two callers share one request, the next turn asks again', async () => {
    expect(shared.modelId).toBe('kohami-local-hash-v1');
    const [[a], [b]] = await Promise.all([shared.embed(['Comment va ma fille ?']), shared.embed(['Comment va ma fille ?'])]);
    expect(inner.state.calls).toEqual([['Comment va ma fille ?']]);
    expect(b).toBe(a);
    expect(a).toEqual((await new LocalHashEmbedder().embed(['Comment va ma fille ?']))[0]);
    const [next] = await shared.embed(['Comment va ma fille ?']);
    expect(inner.state.calls).toHaveLength(2);
    expect(next).not.toBe(a);
  });

  it('the second caller joins a request already answered (recall done, the semantic cache after it)', async () => {
    const [a] = await shared.embed(['Il neige ?']);
    const [b] = await shared.embed(['Il neige ?']);
    expect(b).toBe(a);
    expect(inner.state.calls).toHaveLength(1);
    expect(shared.size).toBe(0);
  });

  it('with one caller a turn (semantic cache off), nothing is shared between turns', async () => {
    const single = new SharedQuestionEmbedder(inner.embedder, { ...OPTIONS, maxUses: 1 });
    await single.embed(['Et ton chat ?']);
    await single.embed(['Et ton chat ?']);
    expect(inner.state.calls).toHaveLength(2);
    expect(single.size).toBe(0);
  });

  it('two different texts never share a vector, however close (case, spaces, Unicode forms, punctuation)', async () => {
    const texts = ['Bonjour', 'bonjour', 'Bonjour ', ' Bonjour', 'Bonjour.', 'Bonjour\u0000', 'café', 'cafe\u0301', 'Bonjour'.normalize('NFD') + '\u200b'];
    expect(new Set(texts).size).toBe(texts.length);
    const vectors = await Promise.all(texts.map(async (t) => (await shared.embed([t]))[0]!));
    expect(inner.state.calls).toEqual(texts.map((t) => [t]));
    expect(new Set(vectors).size).toBe(texts.length);
    for (const [i, t] of texts.entries()) expect(vectors[i]).toEqual((await new LocalHashEmbedder().embed([t]))[0]);
  });

  it('hands out frozen vectors: no caller can alter what another receives', async () => {
    const [v] = await shared.embed(['Quel temps fait-il ?']);
    expect(() => {
      v![0] = 42;
    }).toThrow(TypeError);
    expect((await shared.embed(['Quel temps fait-il ?']))[0]![0]).not.toBe(42);
  });

  it('a failed request is not kept: the next caller asks again', async () => {
    inner.state.mode = 'fail';
    await expect(shared.embed(['Où est mon fils ?'])).rejects.toThrow('embedder down');
    expect(shared.size).toBe(0);
    inner.state.mode = 'ok';
    await expect(shared.embed(['Où est mon fils ?'])).resolves.toHaveLength(1);
    expect(inner.state.calls).toHaveLength(2);
  });

  it('an aborted request is not kept, and it is aborted only when its last waiter leaves', async () => {
    inner.state.mode = 'hang';
    const first = new AbortController();
    const second = new AbortController();
    const a = shared.embed(['Tu te souviens ?'], first.signal);
    const b = shared.embed(['Tu te souviens ?'], second.signal);
    first.abort(new Error('recall over budget'));
    await expect(a).rejects.toThrow('recall over budget');
    expect(inner.state.aborted).toBe(0);
    second.abort(new Error('cache over budget'));
    await expect(b).rejects.toThrow('cache over budget');
    expect(inner.state.aborted).toBe(1);
    expect(shared.size).toBe(0);
    inner.state.mode = 'ok';
    await shared.embed(['Tu te souviens ?']);
    expect(inner.state.calls).toHaveLength(2);
  });

  it('a caller that left does not take the vector from one still waiting', async () => {
    inner.state.mode = 'hang';
    const leaving = new AbortController();
    const gone = shared.embed(['Et demain ?'], leaving.signal);
    leaving.abort(new Error('gone'));
    await expect(gone).rejects.toThrow('gone');
    // The request was aborted with its only waiter; a new caller starts a new one that succeeds.
    inner.state.mode = 'ok';
    await expect(shared.embed(['Et demain ?'])).resolves.toHaveLength(1);
  });

  it('is bounded in time: a vector is not served past its time, and no text stays held after it', async () => {
    shared.warm('Il pleut ?');
    await settle();
    vi.advanceTimersByTime(OPTIONS.ttlMs - 1);
    await shared.embed(['Il pleut ?']);
    expect(inner.state.calls).toHaveLength(1);
    vi.advanceTimersByTime(2);
    await shared.embed(['Il pleut ?']);
    expect(inner.state.calls).toHaveLength(2);
    expect(shared.size).toBe(1);
    vi.advanceTimersByTime(OPTIONS.ttlMs + 2);
    expect(shared.size).toBe(0);
  });

  it('is bounded in size: the oldest text goes first', async () => {
    for (let i = 0; i < OPTIONS.maxEntries + 3; i++) await shared.embed([`question ${i}`]);
    expect(shared.size).toBe(OPTIONS.maxEntries);
    await shared.embed([`question ${OPTIONS.maxEntries + 2}`]);
    await shared.embed(['question 0']);
    expect(inner.state.calls.filter(([t]) => t === 'question 0')).toHaveLength(2);
    expect(inner.state.calls.filter(([t]) => t === `question ${OPTIONS.maxEntries + 2}`)).toHaveLength(1);
  });

  it('passes batches through (fact extraction, re-embedding), never kept', async () => {
    await shared.embed(['un', 'deux']);
    await shared.embed(['un', 'deux']);
    expect(inner.state.calls).toEqual([
      ['un', 'deux'],
      ['un', 'deux'],
    ]);
    expect(shared.size).toBe(0);
  });
});

describe('warm: the voice path’s head start', () => {
  it('starts the request a turn then joins, without asking twice', async () => {
    shared.warm('Parle-moi du jardin');
    await shared.embed(['Parle-moi du jardin']);
    expect(inner.state.calls).toEqual([['Parle-moi du jardin']]);
  });

  it('swallows a failure (nothing kept), is bounded in flight, and gives up at its timeout', async () => {
    inner.state.mode = 'fail';
    shared.warm('une');
    await settle();
    expect(shared.size).toBe(0);
    inner.state.mode = 'hang';
    shared.warm('deux');
    shared.warm('trois');
    shared.warm('quatre');
    expect(inner.state.calls.map(([t]) => t)).toEqual(['une', 'deux', 'trois']);
    vi.advanceTimersByTime(OPTIONS.warmTimeoutMs);
    await settle();
    expect(inner.state.aborted).toBe(2);
    expect(shared.size).toBe(0);
    inner.state.mode = 'ok';
    shared.warm('quatre');
    await shared.embed(['quatre']);
    expect(inner.state.calls.filter(([t]) => t === 'quatre')).toHaveLength(1);
  });

  it('a turn that joined a warm-up keeps the request alive when the warm-up gives up', async () => {
    inner.state.mode = 'hang';
    shared.warm('Ma sœur vient demain');
    const turn = shared.embed(['Ma sœur vient demain'], new AbortController().signal);
    vi.advanceTimersByTime(OPTIONS.warmTimeoutMs);
    await settle();
    expect(inner.state.aborted).toBe(0);
    expect(shared.size).toBe(1);
    void turn.catch(() => {});
  });
});

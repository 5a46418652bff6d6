import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function textParts(chunks: string[]): LanguageModelV3StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    ...chunks.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

/** A stream that yields `chunks`; `gate` (if given) holds the n-th text chunk until it resolves. */
function streamOf(chunks: string[], options: LanguageModelV3CallOptions, gate?: (index: number) => Promise<void>) {
  const parts = textParts(chunks);
  let i = 0;
  let delta = 0;
  return new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      if (i >= parts.length) return controller.close();
      const part = parts[i++]!;
      if (gate && part.type === 'text-delta') await gate(delta++);
      if (options.abortSignal?.aborted) return controller.error(options.abortSignal.reason);
      controller.enqueue(part);
    },
  });
}

/** Streams the given chunks at once. Calls are recorded on `doStreamCalls`. */
export function streamingModel(chunks: string[]) {
  return new MockLanguageModelV3({ doStream: async (options) => ({ stream: streamOf(chunks, options) }) });
}

/** Never answers until aborted: a model slower than any budget. Exposes how many calls were aborted. */
export function hangingModel() {
  const state = { aborted: 0 };
  const model = new MockLanguageModelV3({
    doStream: (options) =>
      new Promise((_resolve, reject) => {
        options.abortSignal?.addEventListener('abort', () => {
          state.aborted += 1;
          reject(options.abortSignal!.reason);
        });
      }),
  });
  return Object.assign(model, { state });
}

/** Fails the first `failures` calls with an HTTP-like error, then streams `chunks`. */
export function failingModel(failures: number, chunks: string[] = ['Je suis là.']) {
  let calls = 0;
  return new MockLanguageModelV3({
    doStream: async (options) => {
      calls += 1;
      if (calls <= failures) throw Object.assign(new Error('503 Service Unavailable'), { statusCode: 503 });
      return { stream: streamOf(chunks, options) };
    },
  });
}

/** First chunk at once, then waits for `release()` before each further chunk: lets a test barge in mid-reply. */
export function controllableModel(chunks: string[]) {
  const waiters: Array<() => void> = [];
  const model = new MockLanguageModelV3({
    doStream: async (options) => ({
      stream: streamOf(chunks, options, (index) => (index === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r)))),
    }),
  });
  return Object.assign(model, { release: () => waiters.splice(0).forEach((r) => r()) });
}

import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';

/**
 * Agent models that misbehave after they started speaking: `stallAfter` sends its chunks, then
 * goes silent with the stream open until the call is aborted; `breakAfter` sends its chunks, then
 * the stream errors. `aborted` counts the calls the runtime aborted (nothing stays open behind a turn).
 */
function misbehavingModel(chunks: string[], ending: 'stall' | 'break') {
  const state = { aborted: 0 };
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      const signal = options.abortSignal;
      const parts: LanguageModelV4StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        ...chunks.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
      ];
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            signal?.addEventListener('abort', () => {
              state.aborted += 1;
              controller.error(signal.reason);
            });
          },
          // One part per read, so the chunks are consumed before the stream breaks or stalls.
          pull(controller) {
            const part = parts.shift();
            if (part) controller.enqueue(part);
            else if (ending === 'break') controller.error(new Error('connection reset by peer'));
            else return new Promise<void>(() => {});
          },
        }),
      };
    },
  });
  return Object.assign(model, { state });
}

export const stallAfter = (chunks: string[]) => misbehavingModel(chunks, 'stall');
export const breakAfter = (chunks: string[]) => misbehavingModel(chunks, 'break');

/** Sends one chunk each time `tick()` is called, forever: a reply that never ends. Counts aborted calls. */
export function endlessModel(chunk = 'et puis ') {
  const state = { aborted: 0 };
  let push: (() => void) | null = null;
  const model = new MockLanguageModelV4({
    doStream: async (options) => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't' });
          push = () => controller.enqueue({ type: 'text-delta', id: 't', delta: chunk });
          options.abortSignal?.addEventListener('abort', () => {
            state.aborted += 1;
            push = null;
            controller.error(options.abortSignal!.reason);
          });
        },
      }),
    }),
  });
  return Object.assign(model, { state, tick: () => push?.() });
}

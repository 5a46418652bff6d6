import { AsyncLocalStorage } from 'node:async_hooks';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { APICallError } from 'ai';
import { DEFAULT_THROTTLE_PAUSE_MS, ProviderPause, throttleOfError } from '../mistral/retry-after.ts';

/**
 * A model call that failed for now: a retryable provider error (408, 409, 429, 5xx, a dropped or
 * refused connection, as the AI SDK's APICallError tells), or an attempt the caller aborted (its
 * circuit-breaker: a provider slower than usual). Schema mismatches and 4xx are not: the same call
 * fails the same way.
 */
export function isTransientModelError(err: unknown, signal?: AbortSignal): boolean {
  if (APICallError.isInstance(err)) return err.isRetryable || (err.statusCode !== undefined && err.statusCode >= 500);
  return signal?.aborted === true;
}

/** What one tracked unit of work (a derivation's model stage) met: calls that gave up on a transient failure. */
export interface TransientReport {
  /** Calls whose last attempt failed for now. */
  failures: number;
  /** The longest wait a provider asked for among them (ms), or null. */
  retryAfterMs: number | null;
}

/**
 * The derivations' side of a provider's rate limit, around the sub-agents' model:
 * - a 429 or a 503 pauses every call made through the gate for its Retry-After (retry-after.ts),
 *   a 503 that names none for 1 s (off the hot path, sparing an overloaded service costs nothing):
 *   while it lasts, a call fails at once with a retryable error instead of reaching the provider;
 * - `track` runs a unit of work and reports the calls in it that gave up on a transient failure
 *   even though the sub-agent swallowed it (the summarizers and the extractor never throw: they
 *   return null or no facts), so the caller can try the whole unit again later.
 * A call is identified across its attempts by its prompt (the sub-agents' defences send the same
 * prompt object again on their one retry): a later success of the same prompt clears its failure.
 */
export class ProviderGate {
  private readonly pause = new ProviderPause();
  private readonly tracking = new AsyncLocalStorage<Map<unknown, number | null>>();

  /** ms left of the provider's pause; 0 when calls may go out. */
  get pauseMs(): number {
    return this.pause.leftMs;
  }

  /** Runs `work`, with every call it makes through a wrapped model watched. */
  async track<T>(work: () => Promise<T>): Promise<{ value: T; transient: TransientReport | null } | { error: unknown; transient: TransientReport | null }> {
    const failed = new Map<unknown, number | null>();
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: await this.tracking.run(failed, work) };
    } catch (error) {
      outcome = { error };
    }
    if (failed.size === 0) return { ...outcome, transient: null };
    const waits = [...failed.values()].filter((ms): ms is number => ms !== null);
    return { ...outcome, transient: { failures: failed.size, retryAfterMs: waits.length > 0 ? Math.max(...waits) : null } };
  }

  /** The model with its calls going through the gate (streaming calls pass untouched: derivations do not stream). */
  wrap(model: LanguageModelV4): LanguageModelV4 {
    return {
      specificationVersion: model.specificationVersion,
      provider: model.provider,
      modelId: model.modelId,
      supportedUrls: model.supportedUrls,
      doStream: (options) => model.doStream(options),
      doGenerate: async (options: LanguageModelV4CallOptions) => {
        const failed = this.tracking.getStore();
        const paused = this.pauseMs;
        if (paused > 0) {
          failed?.set(options.prompt, paused);
          throw new APICallError({
            message: 'the provider asked to wait (Retry-After): call not sent',
            url: 'provider-gate',
            requestBodyValues: {},
            statusCode: 429,
            isRetryable: true,
          });
        }
        // Heard before the caller's own abort listener (registered once this call has started): an
        // attempt cut by its circuit-breaker is recorded before the sub-agent gives up on it.
        const onAbort = () => failed?.set(options.prompt, null);
        options.abortSignal?.addEventListener('abort', onAbort, { once: true });
        try {
          const result = await model.doGenerate(options);
          failed?.delete(options.prompt);
          return result;
        } catch (err) {
          const overloaded = APICallError.isInstance(err) && err.statusCode === 503 ? DEFAULT_THROTTLE_PAUSE_MS : null;
          const wait = this.pause.note(throttleOfError(err) ?? overloaded);
          if (wait !== null) failed?.set(options.prompt, wait);
          else if (isTransientModelError(err, options.abortSignal)) failed?.set(options.prompt, null);
          throw err;
        } finally {
          options.abortSignal?.removeEventListener('abort', onAbort);
        }
      },
    };
  }
}

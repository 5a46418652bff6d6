import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Logger } from 'pino';
import { echoesTranscriptVerbatim, type Exchange, type VerbatimSources } from '../../machines/derivation.ts';
import { APICallError, asSchema, generateObject, type FlexibleSchema, type Schema } from 'ai';

export class AttemptTimeoutError extends Error {
  constructor(ms: number) {
    super(`model call exceeded its ${ms} ms circuit-breaker`);
    this.name = 'AttemptTimeoutError';
  }
}

/** A transport failure worth one more try: the provider said so (5xx, 429, a dropped connection). */
export function isTransportError(err: unknown): boolean {
  return APICallError.isInstance(err) && err.isRetryable;
}

/**
 * The seed's defences for every sub-agent call: a circuit-breaker per attempt (the call is
 * aborted at `attemptTimeoutMs`) and one retry on a transport failure only — never on a
 * timeout (it would double the wait) nor on a schema mismatch (the same prompt fails the same way).
 */
export async function withDefences<T>(attempt: (signal: AbortSignal) => Promise<T>, attemptTimeoutMs: number): Promise<T> {
  for (let tries = 1; ; tries++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeoutError(attemptTimeoutMs)), attemptTimeoutMs);
    try {
      return await Promise.race([
        attempt(controller.signal),
        new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true })),
      ]);
    } catch (err) {
      if (tries >= 2 || !isTransportError(err)) throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The AI SDK converts a zod schema to JSON Schema on every call unless it is handed an already
 * converted one (whose JSON Schema it computes once): each sub-agent's schema is converted once.
 */
const converted = new WeakMap<object, Schema<unknown>>();
function convertedOnce<T>(schema: FlexibleSchema<T>): Schema<T> {
  let done = converted.get(schema);
  if (!done) converted.set(schema, (done = asSchema(schema) as Schema<unknown>));
  return done as Schema<T>;
}

/** One structured sub-agent call on Mistral Small, under the defences above. */
export async function generateWithDefences<T>(
  model: LanguageModelV3,
  request: { schema: FlexibleSchema<T>; system: string; prompt: string },
  attemptTimeoutMs: number,
): Promise<T> {
  const { object } = await withDefences(
    (abortSignal) => generateObject({ model, schema: convertedOnce(request.schema), system: request.system, prompt: request.prompt, abortSignal, maxRetries: 0 }),
    attemptTimeoutMs,
  );
  return object as T;
}

/**
 * How exchanges are shown to the sub-agents: as a plain dialogue, without quotation marks, so
 * the prompt itself never models the quoting the verbatim guard refuses.
 */
export const exchangesPrompt = (exchanges: readonly Exchange[]) => exchanges.map((e) => `Personne : ${e.transcript}\nCompagnon : ${e.replyText}`).join('\n');

/**
 * What every sub-agent that writes text is told (`source` names what it read): the verbatim
 * guard refuses an output that quotes, reports speech, or copies VERBATIM_RUN_WORDS words.
 */
export const reformulationRules = (source: string) =>
  [
    'Reformule toujours avec tes propres mots, à la troisième personne.',
    `N'emploie aucun guillemet et ne cite personne (jamais « a dit : », « répond : » ni « je cite ») ; ne reprends jamais plus de quatre mots consécutifs ${source}, ni une phrase entière de la personne, même courte.`,
    'Les prénoms, les lieux et les dates peuvent être repris tels quels.',
    'Par exemple, si la personne dit ma fille Claire habite à Lyon, écris plutôt : Sa fille Claire vit à Lyon.',
  ].join(' ');

/**
 * A best-effort summary: null on any failure (timeout, transport, schema), on an empty output,
 * and on an output the verbatim guard refuses against `verbatim` (the conversation it was derived from).
 */
export async function bestEffortSummary(
  model: LanguageModelV3,
  request: { schema: FlexibleSchema<{ summary: string | null }>; system: string; prompt: string },
  verbatim: VerbatimSources,
  logger: Pick<Logger, 'warn'>,
  attemptTimeoutMs: number,
): Promise<string | null> {
  try {
    const summary = (await generateWithDefences(model, request, attemptTimeoutMs)).summary?.trim();
    if (!summary) return null;
    const rule = echoesTranscriptVerbatim(summary, verbatim);
    if (rule) {
      logger.warn({ rule }, 'summary dropped: it repeated the conversation verbatim');
      return null;
    }
    return summary;
  } catch (err) {
    logger.warn({ err }, 'summary skipped: the summarizer failed');
    return null;
  }
}

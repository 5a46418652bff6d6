import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { Logger } from 'pino';
import { echoesTranscriptVerbatim, type Exchange, type VerbatimSources } from '../../machines/memory/derivation.ts';
import { APICallError, asSchema, JSONParseError, TypeValidationError, type FlexibleSchema, type Schema } from 'ai';

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
 * `signal`: the caller gave up (its own bound): the attempt is aborted and no retry follows.
 */
export async function withDefences<T>(attempt: (signal: AbortSignal) => PromiseLike<T>, attemptTimeoutMs: number, signal?: AbortSignal): Promise<T> {
  for (let tries = 1; ; tries++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeoutError(attemptTimeoutMs)), attemptTimeoutMs);
    const giveUp = () => controller.abort(signal!.reason);
    if (signal?.aborted) giveUp();
    signal?.addEventListener('abort', giveUp, { once: true });
    try {
      return await Promise.race([
        attempt(controller.signal),
        new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true })),
      ]);
    } catch (err) {
      if (tries >= 2 || !isTransportError(err) || signal?.aborted) throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', giveUp);
    }
  }
}

/** Each sub-agent's zod schema is converted (to JSON Schema and a validator) once, not per call. */
const converted = new WeakMap<object, Schema<unknown>>();
function convertedOnce<T>(schema: FlexibleSchema<T>): Schema<T> {
  let done = converted.get(schema);
  if (!done) converted.set(schema, (done = asSchema(schema) as Schema<unknown>));
  return done as Schema<T>;
}

/**
 * One structured sub-agent call on Mistral Small, under the defences above. Straight on the provider's
 * model (`doGenerate` with a JSON response format and the schema, exactly what the AI SDK's
 * `generateObject` hands it), without `generateObject`'s per-call work around it: it re-validates the
 * prompt against the SDK's message schemas (zod) on every call, opens telemetry spans and merges headers —
 * 80 % of a window fold's CPU with the offline model, and a fold runs every sixth turn of a live session.
 * The output is parsed and checked against the schema here: a reply that is not JSON, or not the
 * schema's shape, fails the call (never retried, see `withDefences`).
 */
export async function generateWithDefences<T>(
  model: LanguageModelV4,
  request: { schema: FlexibleSchema<T>; system: string; prompt: string },
  attemptTimeoutMs: number,
  signal?: AbortSignal,
): Promise<T> {
  const schema = convertedOnce(request.schema);
  const prompt: LanguageModelV4Prompt = [
    { role: 'system', content: request.system },
    { role: 'user', content: [{ type: 'text', text: request.prompt }] },
  ];
  const responseFormat = { type: 'json' as const, schema: await schema.jsonSchema };
  const { content } = await withDefences((abortSignal) => model.doGenerate({ prompt, responseFormat, abortSignal }), attemptTimeoutMs, signal);
  const text = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new JSONParseError({ text, cause });
  }
  const checked = await schema.validate!(value);
  if (!checked.success) throw new TypeValidationError({ value, cause: checked.error });
  return checked.value;
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
  model: LanguageModelV4,
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

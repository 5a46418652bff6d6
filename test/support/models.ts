import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { APICallError } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function textParts(chunks: string[]): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    ...chunks.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

/** A stream that yields `chunks`; `gate` (if given) holds the n-th text chunk until it resolves. */
function streamOf(chunks: string[], options: LanguageModelV4CallOptions, gate?: (index: number) => Promise<void>) {
  const parts = textParts(chunks);
  let i = 0;
  let delta = 0;
  return new ReadableStream<LanguageModelV4StreamPart>({
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
  return new MockLanguageModelV4({ doStream: async (options) => ({ stream: streamOf(chunks, options) }) });
}

/** Never answers until aborted: a model slower than any budget. Exposes how many calls were aborted. */
export function hangingModel() {
  const state = { aborted: 0 };
  const model = new MockLanguageModelV4({
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
  return new MockLanguageModelV4({
    doStream: async (options) => {
      calls += 1;
      if (calls <= failures) throw Object.assign(new Error('503 Service Unavailable'), { statusCode: 503 });
      return { stream: streamOf(chunks, options) };
    },
  });
}

/** Refuses its first call as Mistral does over a rate limit (an APICallError: 429 and its `retry-after`), then streams `chunks`. */
export function throttledModel(retryAfter: string, chunks: string[] = ['Je suis là.']) {
  let calls = 0;
  return new MockLanguageModelV4({
    doStream: async (options) => {
      calls += 1;
      if (calls === 1) throw new APICallError({ message: 'Rate limit exceeded', url: 'chat', requestBodyValues: {}, statusCode: 429, responseHeaders: { 'retry-after': retryAfter }, isRetryable: true });
      return { stream: streamOf(chunks, options) };
    },
  });
}

/** First chunk at once, then waits for `release()` before each further chunk: lets a test barge in mid-reply. */
export function controllableModel(chunks: string[]) {
  const waiters: Array<() => void> = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => ({
      stream: streamOf(chunks, options, (index) => (index === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r)))),
    }),
  });
  return Object.assign(model, { release: () => waiters.splice(0).forEach((r) => r()) });
}

export type ScriptedAnswer = { json: unknown } | { text: string } | { status: number } | 'hang';

/**
 * A model for generateObject calls that answers each call with the next scripted answer:
 * a JSON value, raw text, an HTTP-like failure (APICallError, retryable for 5xx), or a hang.
 */
export function scriptedModel(...answers: ScriptedAnswer[]) {
  let call = 0;
  return new MockLanguageModelV4({
    doGenerate: async (options) => {
      const answer = answers[Math.min(call++, answers.length - 1)]!;
      if (answer === 'hang') {
        return new Promise((_resolve, reject) => options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal!.reason)));
      }
      if ('status' in answer) {
        throw new APICallError({ message: `HTTP ${answer.status}`, url: 'http://mistral.test', requestBodyValues: {}, statusCode: answer.status, isRetryable: answer.status >= 500 });
      }
      const text = 'json' in answer ? JSON.stringify(answer.json) : answer.text;
      return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
}

/**
 * The sub-agents' model: answers from the schema it is asked for (score, summary or facts),
 * with switches to fail each kind, a delay, a hold (every call waits for `held` to settle, however
 * long the machine takes to get there), and a gauge of concurrent calls.
 */
export function subagentModel(answers: { score?: number; summary?: string | null; facts?: unknown[] } = {}) {
  const state = { failScore: false, failSummary: false, delayMs: 0, held: null as Promise<void> | null, inFlight: 0, maxInFlight: 0 };
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      state.inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      try {
        if (state.held) await state.held;
        if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
        const schema = options.responseFormat?.type === 'json' ? JSON.stringify(options.responseFormat.schema) : '';
        const kind = schema.includes('"score"') ? 'score' : schema.includes('"summary"') ? 'summary' : 'facts';
        if ((kind === 'score' && state.failScore) || (kind === 'summary' && state.failSummary)) {
          throw new APICallError({ message: 'HTTP 400', url: 'http://mistral.test', requestBodyValues: {}, statusCode: 400, isRetryable: false });
        }
        const json =
          kind === 'score'
            ? { score: answers.score ?? 80 }
            : kind === 'summary'
              ? { summary: answers.summary === undefined ? 'Le senior a évoqué sa journée.' : answers.summary }
              : { facts: answers.facts ?? [] };
        return { content: [{ type: 'text', text: JSON.stringify(json) }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      } finally {
        state.inFlight -= 1;
      }
    },
  });
  return Object.assign(model, { state });
}

/** The system prompt a mock model was given on one of its streaming calls (the last by default). */
export function systemPromptOf(model: MockLanguageModelV4, call = -1): string {
  return model.doStreamCalls
    .at(call)!
    .prompt.filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
}

/** One agent model for a whole runtime, whose behaviour each test swaps with `use`; counts every call. */
export function switchableModel(initial: MockLanguageModelV4) {
  let current = initial;
  const state = { calls: 0 };
  const model = Object.assign(streamingModel([]), {
    doStream: (options: LanguageModelV4CallOptions) => {
      state.calls += 1;
      return current.doStream(options);
    },
  });
  // A getter, not a copied value: Object.assign would read `calls` once.
  return Object.defineProperties(Object.assign(model, { use: (next: MockLanguageModelV4) => (current = next) }), {
    calls: { get: () => state.calls },
  }) as typeof model & { use: (next: MockLanguageModelV4) => MockLanguageModelV4; readonly calls: number };
}

/** The three ways `quotingModel` copies what it reads. */
export const QUOTING_WAYS = ['whole', 'partial', 'clause'] as const;
export type QuotingWay = (typeof QUOTING_WAYS)[number];

/** The lines a sub-agent prompt shows — « Personne : … », « Compagnon : … », the dream's « - … » notes — prefixes removed. */
function promptLines(options: LanguageModelV4CallOptions): string[] {
  const text = options.prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('\n');
  return text
    .split('\n')
    .map((line) => /^(?:Personne|Compagnon) : (.+)$|^- (.+)$/u.exec(line))
    .flatMap((m) => (m ? [(m[1] ?? m[2])!.trim()] : []));
}

/**
 * An adversarial sub-agent model that quotes its input: it reads the prompt it is given and
 * copies each line of it, in one of three ways — `whole` (every line in quotes, after « a dit : »),
 * `partial` (a quoted clause: the first three words of each line) or `clause` (a paraphrase with
 * six consecutive words of each line, no quotation mark). Summaries (per-turn, segment, window)
 * take the ways in turn, counted per system prompt so each kind gets all three; an extraction
 * returns one fact per way and line (each short enough for the schema) plus `clean.fact`; a consolidation spreads the ways over its fields
 * beside the `clean` ones. Every copied fragment is recorded in `state.copied`.
 */
export function quotingModel(clean: { score: number; fact: string; pattern: string; question: string; interest: string }) {
  const state = { copied: new Set<string>(), calls: new Map<string, number>() };
  const copy = (way: QuotingWay, lines: string[]) => {
    const pieces = lines.map((line) => {
      const words = line.split(/\s+/u);
      return way === 'whole' ? line : way === 'partial' ? words.slice(0, 3).join(' ') : words.slice(1, 7).join(' ');
    });
    for (const piece of pieces) state.copied.add(piece);
    if (way === 'whole') return `La personne a dit : ${pieces.map((p) => `« ${p} »`).join(' puis ')}`;
    if (way === 'partial') return `Le senior a parlé de sa journée ; il a évoqué ${pieces.map((p) => `« ${p} »`).join(' et ')}, sur un ton serein.`;
    return `Le senior a raconté que ${pieces.join(', puis que ')}, et il semblait serein.`;
  };
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      const schema = options.responseFormat?.type === 'json' ? JSON.stringify(options.responseFormat.schema) : '';
      const system = options.prompt.find((m) => m.role === 'system')?.content ?? '';
      const call = state.calls.get(system) ?? 0;
      state.calls.set(system, call + 1);
      const lines = promptLines(options);
      const [whole, partial, clause] = QUOTING_WAYS.map((way) => copy(way, lines));
      const json = schema.includes('"score"')
        ? { score: clean.score }
        : schema.includes('"patterns"')
          ? {
              patterns: [whole, clause, clean.pattern].map((pattern) => ({ pattern, category: 'profil' })),
              hypotheses: [partial],
              continuity: [clause],
              nextSession: { resumeWith: whole, questionsToAsk: [partial, clean.question], avoid: [clause] },
              compass: { uncertainties: [whole], tone: partial, topicsToExplore: [clause] },
              interlocutor: { role: clause, interests: [clean.interest, partial], recurringTopics: [whole], patterns: [clause] },
            }
          : schema.includes('"summary"')
            ? { summary: copy(QUOTING_WAYS[call % QUOTING_WAYS.length]!, lines) }
            : { facts: [...QUOTING_WAYS.flatMap((way) => lines.map((line) => copy(way, [line]))), clean.fact].map((content) => ({ content, category: 'profil', confidence: 0.9 })) };
      return { content: [{ type: 'text', text: JSON.stringify(json) }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
  return Object.assign(model, { state });
}

import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';

export const OFFLINE_MODEL_ID = 'kohami-offline-1';

const REPLIES = [
  "Je vous écoute avec attention. Racontez-m'en un peu plus ?",
  'Merci de me le dire. Comment vous sentez-vous aujourd’hui ?',
  'Je comprends. Voulez-vous que nous en parlions encore un peu ?',
];
const QUESTION_REPLY = "C'est une bonne question. Je fonctionne hors ligne pour le moment, mais je reste là pour discuter avec vous.";

const usage = (output: number): LanguageModelV4Usage => ({
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

function lastUserText(options: LanguageModelV4CallOptions): string {
  for (let i = options.prompt.length - 1; i >= 0; i--) {
    const message = options.prompt[i]!;
    if (message.role !== 'user') continue;
    return message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
  }
  return '';
}

/** Deterministic: the same input always gets the same plain French reply. */
export function offlineReply(userText: string): string {
  const text = userText.trim();
  if (text.endsWith('?')) return QUESTION_REPLY;
  let hash = 0;
  for (const ch of text) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return REPLIES[hash % REPLIES.length]!;
}

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; minimum?: number; maximum?: number; anyOf?: Schema[] };

/**
 * The least committal value a JSON schema admits: null where allowed, empty arrays, the
 * middle of a number's range. Offline, a mood scores neutral, a session yields no fact,
 * a summary is null — the derivations run, and derive nothing.
 */
export function neutralValue(schema: Schema): unknown {
  const types = schema.anyOf ? schema.anyOf.map((s) => s.type).flat() : [schema.type].flat();
  if (types.includes('null')) return null;
  if (types.includes('object')) return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, neutralValue(v)]));
  if (types.includes('array')) return [];
  if (types.includes('number') || types.includes('integer')) return Math.round(((schema.minimum ?? 0) + (schema.maximum ?? 100)) / 2);
  if (types.includes('boolean')) return false;
  return '';
}

/**
 * The runtime's model when there is no MISTRAL_API_KEY. It implements the AI SDK
 * language-model interface, so the agent runs the very same streaming path.
 */
export class OfflineLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4' as const;
  readonly provider = 'kohami-offline';
  readonly supportedUrls = {};

  readonly modelId: string;

  constructor(modelId: string = OFFLINE_MODEL_ID) {
    this.modelId = modelId;
  }

  async doGenerate(options: LanguageModelV4CallOptions) {
    const json = options.responseFormat?.type === 'json' ? options.responseFormat.schema : undefined;
    const text = json ? JSON.stringify(neutralValue(json as Schema)) : offlineReply(lastUserText(options));
    return {
      content: [{ type: 'text' as const, text }],
      finishReason: { unified: 'stop' as const, raw: 'stop' },
      usage: usage(text.split(' ').length),
      warnings: [],
    };
  }

  async doStream(options: LanguageModelV4CallOptions) {
    const words = offlineReply(lastUserText(options)).split(/(?<= )/);
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't0' },
      ...words.map((delta) => ({ type: 'text-delta' as const, id: 't0', delta })),
      { type: 'text-end', id: 't0' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(words.length) },
    ];
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
    return { stream };
  }
}

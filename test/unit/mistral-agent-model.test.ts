import { createMistral } from '@ai-sdk/mistral';
import { APICallError, type LanguageModelV4, type LanguageModelV4CallOptions, type LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MistralAgentModel } from '../../adapters/models/mistral-agent-model.ts';
import { InvalidMistralBaseUrlError } from '../../adapters/mistral/base-url.ts';
import { expectContractViolations } from '../support/contract-violations.ts';
import { FakeMistral } from '../support/fake-mistral.ts';

/**
 * The agent's lean Mistral model against the AI SDK's own provider, both on the same local fake:
 * the same request bodies, the same stream parts, the same errors.
 */
let mistral: FakeMistral;
/** When set, the chat endpoint answers with these raw server-sent events instead of the fake's modes. */
let rawEvents: string | null = null;
let sdk: LanguageModelV4;
let lean: MistralAgentModel;

beforeAll(async () => {
  mistral = await new FakeMistral({
    request(req, res: ServerResponse) {
      if (rawEvents === null || !req.url?.endsWith('/chat/completions')) return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(rawEvents);
      return true;
    },
    upgrade: () => false,
  }).start();
  sdk = createMistral({ apiKey: 'k', baseURL: mistral.baseUrl })('mistral-small-2603');
  lean = new MistralAgentModel(sdk, { apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
});
afterAll(() => mistral.stop());
afterEach(() => {
  rawEvents = null;
  mistral.mode = { kind: 'stream', chunks: ['Bonjour.'] };
});

async function parts(model: LanguageModelV4, options: Partial<LanguageModelV4CallOptions> = {}): Promise<LanguageModelV4StreamPart[]> {
  const { stream } = await model.doStream({ prompt: PROMPT, maxOutputTokens: 300, ...options });
  const out: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

const PROMPT: LanguageModelV4CallOptions['prompt'] = [
  { role: 'system', content: 'Tu es une compagne attentive.' },
  { role: 'user', content: [{ type: 'text', text: 'Tu te souviens de ma fille ?' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Je regarde.' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'search_memory', input: { query: 'fille' } }] },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'c1', toolName: 'search_memory', output: { type: 'json', value: { facts: ['Sa fille Claire habite à Lyon.'] } } },
      { type: 'tool-result', toolCallId: 'c2', toolName: 'search_memory', output: { type: 'error-text', value: 'search failed' } },
    ],
  },
];
const TOOLS: LanguageModelV4CallOptions['tools'] = [
  { type: 'function', name: 'search_memory', description: 'Cherche dans les souvenirs.', inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  { type: 'function', name: 'other', inputSchema: { type: 'object', properties: {} } },
];

/** The last chat request's body. */
const lastBody = () => mistral.chatRequests.at(-1)!.body;

describe('MistralAgentModel', () => {
  it('checks the base URL at construction (INV-T02)', () => {
    expect(() => new MistralAgentModel(sdk, { apiKey: 'k', baseUrl: 'https://api.example.com/v1', env: 'development' })).toThrow(InvalidMistralBaseUrlError);
    expect(() => new MistralAgentModel(sdk, { apiKey: 'k', baseUrl: mistral.baseUrl, env: 'production' })).toThrow(InvalidMistralBaseUrlError);
  });

  it.each([
    ['no tools', {}],
    ['tools, auto', { tools: TOOLS, toolChoice: { type: 'auto' } }],
    ['tools, none', { tools: TOOLS, toolChoice: { type: 'none' } }],
    ['tools, required', { tools: TOOLS, toolChoice: { type: 'required' } }],
    ['one tool by name', { tools: TOOLS, toolChoice: { type: 'tool', toolName: 'search_memory' } }],
    ['the standard settings', { temperature: 0.3, topP: 0.9, stopSequences: ['FIN'], seed: 7, frequencyPenalty: 0.1, presencePenalty: 0.2 }],
  ] as Array<[string, Partial<LanguageModelV4CallOptions>]>)('sends the request body the AI SDK sends (%s), with the key, to MISTRAL_BASE_URL', async (_name, options) => {
    await parts(sdk, options);
    const expected = lastBody();
    await parts(lean, options);
    expect(lastBody()).toEqual(expected);
    expect(mistral.chatRequests.at(-1)).toMatchObject({ path: '/v1/chat/completions', authorization: 'Bearer k' });
  });

  it('an assistant message last is sent as a prefix, as the AI SDK does', async () => {
    const prompt: LanguageModelV4CallOptions['prompt'] = [...PROMPT.slice(0, 2), { role: 'assistant', content: [{ type: 'text', text: 'Oui, ' }] }];
    await parts(sdk, { prompt });
    const expected = lastBody();
    await parts(lean, { prompt });
    expect(lastBody()).toEqual(expected);
    expect((lastBody().messages as Array<{ prefix?: boolean }>).at(-1)!.prefix).toBe(true);
  });

  it('streams the same parts as the AI SDK: text deltas, then finish with the usage', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Quelle ', 'belle ', 'journée.'] };
    const expected = await parts(sdk);
    const got = await parts(lean);
    expect(got).toEqual(expected);
    expect(got.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta).join('')).toBe('Quelle belle journée.');
    expect(got.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 5 }, outputTokens: { total: 3 } } });
  });

  it('gathers tool calls (whole, or in pieces by index) and emits them at the end, as the AI SDK does', async () => {
    // A piece without its function's name is off the SDK's schema (Mistral sends whole calls): played on purpose, as the AI SDK reads it.
    const broken = expectContractViolations();
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\r\n\r\n`;
    rawEvents = [
      ': a comment line\n\n',
      chunk({ role: 'assistant', content: 'Je cherche. ' }),
      chunk({ tool_calls: [{ id: 'call_1', index: 0, function: { name: 'search_memory', arguments: '{"query":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"fille"}' } }] }),
      chunk({ tool_calls: [{ id: 'call_2', function: { name: 'search_memory', arguments: '{"query":"jardin"}' } }] }, 'tool_calls'),
      'data: [DONE]\n\n',
    ].join('');
    const expected = await parts(sdk, { tools: TOOLS, toolChoice: { type: 'auto' } });
    const got = await parts(lean, { tools: TOOLS, toolChoice: { type: 'auto' } });
    expect(got).toEqual(expected);
    expect(got.filter((p) => p.type === 'tool-call')).toEqual([
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'search_memory', input: '{"query":"fille"}' },
      { type: 'tool-call', toolCallId: 'call_2', toolName: 'search_memory', input: '{"query":"jardin"}' },
    ]);
    expect(got.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'tool-calls' } });
    expect(new Set(broken.map((v) => v.path.join('.')))).toEqual(new Set(['choices.0.delta.tool_calls.0.function.name']));
  });

  it('an event that is not JSON is an error part (the stream still ends), as with the AI SDK', async () => {
    const broken = expectContractViolations();
    mistral.mode = { kind: 'malformed' };
    const expected = (await parts(sdk)).map((p) => p.type);
    const got = await parts(lean);
    expect(got.map((p) => p.type)).toEqual(expected);
    expect(got.some((p) => p.type === 'error')).toBe(true);
    expect(broken.map((v) => `${v.side} ${v.message}`)).toContain('answer not JSON');
  });

  it.each([
    [503, true],
    [429, true],
    [400, false],
  ])('HTTP %i is an APICallError (retryable: %s) that carries neither the prompt nor the answer’s body', async (status, retryable) => {
    mistral.mode = { kind: 'status', status };
    const err = await parts(lean).catch((e: unknown) => e);
    expect(APICallError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ statusCode: status, isRetryable: retryable, requestBodyValues: {} });
    expect(JSON.stringify(err)).not.toContain('ma fille');
    expect((err as Error).message).not.toContain('service unavailable');
  });

  it('a server that is gone is a retryable APICallError', async () => {
    const gone = await new FakeMistral().start();
    const url = gone.baseUrl;
    await gone.stop();
    const err = await parts(new MistralAgentModel(sdk, { apiKey: 'k', baseUrl: url, env: 'test' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ isRetryable: true });
    expect(APICallError.isInstance(err)).toBe(true);
  });

  it('an abort while waiting, or while streaming, ends the call with its reason and drops the connection', async () => {
    mistral.mode = { kind: 'hang' };
    const waiting = new AbortController();
    const call = lean.doStream({ prompt: PROMPT, abortSignal: waiting.signal });
    await expect.poll(() => mistral.open.chat).toBe(1);
    waiting.abort(new Error('barge-in'));
    await expect(call).rejects.toThrow('barge-in');
    await expect.poll(() => mistral.open.chat).toBe(0);

    mistral.mode = { kind: 'stall', chunks: ['Alors, '] };
    const streaming = new AbortController();
    const { stream } = await lean.doStream({ prompt: PROMPT, abortSignal: streaming.signal });
    const reader = stream.getReader();
    let text = '';
    while (!text) {
      const { value } = await reader.read();
      if (value?.type === 'text-delta') text = value.delta;
    }
    expect(text).toBe('Alors, ');
    streaming.abort(new Error('stall'));
    await expect(reader.read()).rejects.toThrow('stall');
    await expect.poll(() => mistral.open.chat).toBe(0);
  });

  it('cancelling the stream (the agent leaving early) drops the connection', async () => {
    mistral.mode = { kind: 'stall', chunks: ['Alors, '] };
    const { stream } = await lean.doStream({ prompt: PROMPT });
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(() => mistral.open.chat).toBe(0);
  });

  it('a connection cut mid-stream errors the stream', async () => {
    mistral.mode = { kind: 'break', chunks: ['Je '] };
    await expect(parts(lean)).rejects.toThrow();
  });

  it('a call outside what the agent sends (a JSON response format) and non-streaming calls go to the AI SDK’s model', async () => {
    await parts(lean, { responseFormat: { type: 'json' } });
    expect(lastBody().response_format).toEqual({ type: 'json_object' });
    mistral.mode = { kind: 'stream', chunks: ['x'] };
    const before = mistral.chatRequests.length;
    await Promise.resolve(lean.doGenerate({ prompt: PROMPT })).catch(() => {});
    expect(mistral.chatRequests.length - before).toBe(1);
    expect(lastBody().stream).toBeUndefined();
  });
});

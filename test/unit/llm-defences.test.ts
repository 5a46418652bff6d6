import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { APICallError, JSONParseError, TypeValidationError } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateWithDefences } from '../../adapters/subagents/llm-defences.ts';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const Schema = z.object({ summary: z.string().max(20).nullable() });
const request = { schema: Schema, system: 'Résume.', prompt: 'Personne : Bonjour' };

/** A model answering each call with the next of `answers` (a text, or an error thrown). */
function answering(...answers: Array<string | Error>) {
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const answer = answers.shift()!;
      if (answer instanceof Error) throw answer;
      return { content: [{ type: 'text', text: answer }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
}

const transportError = () => new APICallError({ message: 'HTTP 503', url: 'http://mistral.test', requestBodyValues: {}, statusCode: 503, isRetryable: true });

describe('generateWithDefences: a structured sub-agent call straight on the provider model', () => {
  it('hands the model what generateObject would (system, user prompt, JSON format with the schema) and returns the checked object', async () => {
    const model = answering('{"summary":"Une journée calme."}');
    expect(await generateWithDefences(model, request, 1000)).toEqual({ summary: 'Une journée calme.' });
    const call: LanguageModelV4CallOptions = model.doGenerateCalls[0]!;
    expect(call.prompt).toEqual([
      { role: 'system', content: 'Résume.' },
      { role: 'user', content: [{ type: 'text', text: 'Personne : Bonjour' }] },
    ]);
    expect(call.responseFormat).toMatchObject({ type: 'json', schema: { type: 'object', properties: { summary: expect.anything() } } });
    expect(call.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('refuses a reply that is not JSON, or not the schema’s shape, without retrying', async () => {
    const notJson = answering('Voici le résumé : calme.');
    await expect(generateWithDefences(notJson, request, 1000)).rejects.toBeInstanceOf(JSONParseError);
    const tooLong = answering(JSON.stringify({ summary: 'x'.repeat(21) }));
    await expect(generateWithDefences(tooLong, request, 1000)).rejects.toBeInstanceOf(TypeValidationError);
    const empty = answering('');
    await expect(generateWithDefences(empty, request, 1000)).rejects.toBeInstanceOf(JSONParseError);
    expect([notJson, tooLong, empty].map((m) => m.doGenerateCalls.length)).toEqual([1, 1, 1]);
  });

  it('retries once on a transport failure, never twice', async () => {
    const once = answering(transportError(), '{"summary":null}');
    expect(await generateWithDefences(once, request, 1000)).toEqual({ summary: null });
    const twice = answering(transportError(), transportError(), '{"summary":null}');
    await expect(generateWithDefences(twice, request, 1000)).rejects.toBeInstanceOf(APICallError);
    expect(twice.doGenerateCalls).toHaveLength(2);
  });
});

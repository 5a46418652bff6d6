import type { LanguageModelV3 } from '@ai-sdk/provider';
import { stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import type { AgentChunk, AgentPort, AgentRequest, MemorySearchPort } from '../machines/ports.ts';
import { buildAgentPrompt } from '../machines/prompt.ts';

const SEARCH_MEMORY = [
  'Cherche dans les souvenirs plus anciens de la personne (anciennes conversations et faits connus).',
  "À n'utiliser que si la personne fait allusion à quelque chose d'ancien que le contexte ne contient pas.",
].join(' ');

/** Replies are spoken: short is kind, and a bound keeps a runaway stream cheap. */
const MAX_OUTPUT_TOKENS = 300;

/**
 * Flux 3 through the AI SDK. Retries are the machine's decision (one, within the
 * turn budget), so the SDK's own are off; errors surface as a thrown exception.
 */
export class AgentFluxAdapter implements AgentPort {
  /** With `memory`, the model may call `search_memory` (tier 3) before it answers. */
  constructor(
    private readonly model: LanguageModelV3,
    private readonly memory?: MemorySearchPort,
  ) {}

  async *stream(request: AgentRequest, signal: AbortSignal): AsyncIterable<AgentChunk> {
    const prompt = buildAgentPrompt(request);
    const memory = this.memory;
    const result = streamText({
      model: this.model,
      system: prompt.system,
      messages: prompt.messages,
      abortSignal: signal,
      maxRetries: 0,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      onError: () => {},
      ...(memory
        ? {
            tools: {
              search_memory: tool({
                description: SEARCH_MEMORY,
                inputSchema: z.object({ query: z.string().min(1).max(300) }),
                execute: ({ query }, { abortSignal }) => memory.searchMemory(request.seniorId, query, abortSignal),
              }),
            },
            // One search, then the answer: a turn never loops on tools.
            stopWhen: stepCountIs(2),
          }
        : {}),
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') yield { type: 'text', text: part.text };
      else if (part.type === 'tool-call') yield { type: 'tool', name: part.toolName };
      else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error('model stream error');
      else if (part.type === 'abort') return;
    }
  }
}

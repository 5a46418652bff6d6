import type { LanguageModelV3 } from '@ai-sdk/provider';
import { streamText } from 'ai';
import type { AgentPort, AgentRequest } from '../machines/ports.ts';
import { buildAgentPrompt } from '../machines/prompt.ts';

/** Replies are spoken: short is kind, and a bound keeps a runaway stream cheap. */
const MAX_OUTPUT_TOKENS = 300;

/**
 * Flux 3 through the AI SDK. Retries are the machine's decision (one, within the
 * turn budget), so the SDK's own are off; errors surface as a thrown exception.
 */
export class AgentFluxAdapter implements AgentPort {
  constructor(private readonly model: LanguageModelV3) {}

  async *stream(request: AgentRequest, signal: AbortSignal): AsyncIterable<string> {
    const prompt = buildAgentPrompt(request);
    const result = streamText({
      model: this.model,
      system: prompt.system,
      messages: prompt.messages,
      abortSignal: signal,
      maxRetries: 0,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') yield part.text;
      else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error('model stream error');
      else if (part.type === 'abort') return;
    }
  }
}

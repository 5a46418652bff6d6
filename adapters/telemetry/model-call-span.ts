import { SpanKind, type Span } from '@opentelemetry/api';
import type { LanguageModelV3FinishReason, LanguageModelV3Usage } from '@ai-sdk/provider';
import { failSpan, type TurnTraces } from './turn-traces.ts';

/** OpenTelemetry's GenAI name for a provider, from the AI SDK's (`mistral.chat`); others keep theirs. */
export function genAiProvider(provider: string): string {
  return provider.startsWith('mistral') ? 'mistral_ai' : provider;
}

/**
 * One model call of the agent, as the GenAI semantic conventions name it (`chat <model>`, a client
 * span): the model, the output bound, the tokens counted and the finish reason — and, since the
 * agent streams, when its first token came. The prompt and the completion are never recorded (the
 * conventions' `gen_ai.input.messages` / `gen_ai.output.messages` are opt-in, and stay out).
 */
export class ModelCallSpan {
  private readonly startedAt = performance.now();
  private firstTokenAt: number | null = null;

  private constructor(private readonly span: Span) {}

  /** Null when the senior has no turn open (a preemptive turn's call, made before its turn). */
  static start(traces: TurnTraces, seniorId: string, model: { provider: string; modelId: string }, request: { maxTokens: number; tools: boolean }): ModelCallSpan | null {
    const provider = genAiProvider(model.provider);
    const span = traces.startStage(seniorId, `chat ${model.modelId}`, {
      kind: SpanKind.CLIENT,
      attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      // The name before semantic conventions 1.37, still what many backends read.
      'gen_ai.system': provider,
      'gen_ai.request.model': model.modelId,
      'gen_ai.request.max_tokens': request.maxTokens,
      'kohami.model.tools': request.tools,
      },
    });
    if (!span) return null;
    return new ModelCallSpan(span);
  }

  firstToken(): void {
    if (this.firstTokenAt !== null) return;
    this.firstTokenAt = performance.now();
    this.span.addEvent('first_token');
    this.span.setAttribute('kohami.first_token_ms', Math.round(this.firstTokenAt - this.startedAt));
  }

  finish(finishReason: LanguageModelV3FinishReason, usage: LanguageModelV3Usage): void {
    this.span.setAttribute('gen_ai.response.finish_reasons', [finishReason.raw ?? finishReason.unified]);
    if (usage.inputTokens.total !== undefined) this.span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens.total);
    if (usage.outputTokens.total !== undefined) this.span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens.total);
  }

  toolCall(name: string): void {
    this.span.addEvent('tool_call', { 'gen_ai.tool.name': name });
  }

  fail(err: unknown): void {
    failSpan(this.span, err);
  }

  end(): void {
    this.span.end();
  }
}

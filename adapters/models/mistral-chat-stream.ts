import { createParser } from 'eventsource-parser';
import type { LanguageModelV4FinishReason, LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';

interface ToolCallDelta {
  id?: string | null;
  index?: number | null;
  function?: { name?: string | null; arguments?: string | null };
}

interface ChatChunk {
  id?: string | null;
  model?: string | null;
  created?: number | null;
  choices: Array<{ delta?: { content?: unknown; tool_calls?: ToolCallDelta[] | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; num_cached_tokens?: number | null } | null;
}

class MistralChunkError extends Error {
  constructor(what: string) {
    super(`mistral chat stream: ${what}`);
    this.name = 'MistralChunkError';
  }
}

const FINISH_REASONS: Record<string, LanguageModelV4FinishReason['unified']> = { stop: 'stop', length: 'length', model_length: 'length', tool_calls: 'tool-calls' };

/**
 * Mistral's chat completion stream (server-sent events of `chat.completion.chunk`s) turned into
 * the language-model stream parts, as @ai-sdk/mistral 4 emits them: text (and reasoning) deltas,
 * tool calls gathered by id or index and emitted whole at the end, then `finish` with the usage.
 * A chunk that is not JSON, or has no choices, becomes an `error` part (the stream goes on, as
 * with the AI SDK; the agent ends its turn on one). Fed with the response's text as it comes.
 */
export class MistralChatStreamDecoder {
  private readonly events = createParser({
    onEvent: ({ data }) => {
      if (data !== '[DONE]') this.event(data);
    },
  });
  private first = true;
  private textOpen = false;
  private reasoningId: string | null = null;
  private reasoningCount = 0;
  private finishReason: LanguageModelV4FinishReason = { unified: 'other', raw: undefined };
  private usage: ChatChunk['usage'] = undefined;
  private readonly calls: Array<{ id: string; name: string; input: string }> = [];
  private readonly callsById = new Map<string, { id: string; name: string; input: string }>();
  private readonly callsByIndex = new Map<number, { id: string; name: string; input: string }>();
  private latestCall: { id: string; name: string; input: string } | undefined;

  private readonly emit: (part: LanguageModelV4StreamPart) => void;

  constructor(emit: (part: LanguageModelV4StreamPart) => void) {
    this.emit = emit;
  }

  /** The next piece of the response body. */
  push(text: string): void {
    this.events.feed(text);
  }

  /** The body ended: the last event, then what is still open, the tool calls and `finish`. */
  end(): void {
    // The body's end also ends its last event: a server that leaves out the final blank line loses nothing.
    this.events.feed('\n\n');
    if (this.reasoningId !== null) this.emit({ type: 'reasoning-end', id: this.reasoningId });
    if (this.textOpen) this.emit({ type: 'text-end', id: '0' });
    for (const call of this.calls) {
      this.emit({ type: 'tool-input-end', id: call.id });
      this.emit({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input });
    }
    this.emit({ type: 'finish', finishReason: this.finishReason, usage: usageOf(this.usage) });
  }

  private event(data: string): void {
    let chunk: ChatChunk;
    try {
      chunk = JSON.parse(data) as ChatChunk;
    } catch {
      return this.emit({ type: 'error', error: new MistralChunkError('an event that is not JSON') });
    }
    const choice = Array.isArray(chunk?.choices) ? chunk.choices[0] : undefined;
    if (!choice) return this.emit({ type: 'error', error: new MistralChunkError('a chunk without a choice') });
    if (this.first) {
      this.first = false;
      this.emit({
        type: 'response-metadata',
        ...(chunk.id != null ? { id: chunk.id } : {}),
        ...(chunk.model != null ? { modelId: chunk.model } : {}),
        ...(chunk.created != null ? { timestamp: new Date(chunk.created * 1000) } : {}),
      });
    }
    if (chunk.usage != null) this.usage = chunk.usage;
    const delta = choice.delta;
    this.content(delta?.content);
    for (const call of delta?.tool_calls ?? []) this.toolCall(call);
    if (choice.finish_reason != null) this.finishReason = { unified: FINISH_REASONS[choice.finish_reason] ?? 'other', raw: choice.finish_reason };
  }

  /** A delta's content: a string, or parts (text, and thinking for reasoning models). */
  private content(content: unknown): void {
    if (typeof content === 'string') return this.text(content);
    if (!Array.isArray(content)) return;
    let text = '';
    for (const part of content as Array<{ type?: string; text?: string; thinking?: Array<{ type?: string; text?: string }> }>) {
      if (part.type === 'text' && typeof part.text === 'string') text += part.text;
      else if (part.type === 'thinking' && Array.isArray(part.thinking)) this.reasoning(part.thinking.filter((t) => t.type === 'text').map((t) => t.text ?? '').join(''));
    }
    this.text(text);
  }

  private reasoning(delta: string): void {
    if (!delta) return;
    if (this.reasoningId === null) {
      if (this.textOpen) this.emit({ type: 'text-end', id: '0' });
      this.textOpen = false;
      this.reasoningId = `reasoning-${this.reasoningCount++}`;
      this.emit({ type: 'reasoning-start', id: this.reasoningId });
    }
    this.emit({ type: 'reasoning-delta', id: this.reasoningId, delta });
  }

  private text(delta: string): void {
    if (!delta) return;
    if (!this.textOpen) {
      if (this.reasoningId !== null) this.emit({ type: 'reasoning-end', id: this.reasoningId });
      this.reasoningId = null;
      this.textOpen = true;
      this.emit({ type: 'text-start', id: '0' });
    }
    this.emit({ type: 'text-delta', id: '0', delta });
  }

  /** Mistral sends a call whole in one delta; later deltas of the same id or index append to its arguments. */
  private toolCall(delta: ToolCallDelta): void {
    const { id, index } = delta;
    let call = id ? this.callsById.get(id) : index != null ? this.callsByIndex.get(index) : this.latestCall;
    if (!call) {
      if (id == null) return this.emit({ type: 'error', error: new MistralChunkError('a tool call without an id') });
      if (delta.function?.name == null) return this.emit({ type: 'error', error: new MistralChunkError('a tool call without a name') });
      call = { id, name: delta.function.name, input: delta.function.arguments ?? '' };
      this.calls.push(call);
      if (id) this.callsById.set(id, call);
      this.emit({ type: 'tool-input-start', id, toolName: call.name });
      if (call.input) this.emit({ type: 'tool-input-delta', id, delta: call.input });
    } else if (delta.function?.arguments != null) {
      call.input += delta.function.arguments;
      this.emit({ type: 'tool-input-delta', id: call.id, delta: delta.function.arguments });
    }
    if (index != null) this.callsByIndex.set(index, call);
    this.latestCall = call;
  }
}

function usageOf(usage: ChatChunk['usage']): LanguageModelV4Usage {
  if (usage == null) {
    return { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } };
  }
  const input = usage.prompt_tokens;
  const cached = usage.num_cached_tokens ?? 0;
  return {
    inputTokens: { total: input, noCache: input === undefined ? undefined : input - cached, cacheRead: cached || undefined, cacheWrite: undefined },
    outputTokens: { total: usage.completion_tokens, text: usage.completion_tokens, reasoning: undefined },
    raw: usage,
  };
}

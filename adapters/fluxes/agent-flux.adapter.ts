import type {
  JSONValue,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolCall,
  LanguageModelV4ToolResultPart,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { AgentThrottledError, type AgentChunk, type AgentPort, type AgentRequest, type MemorySearchPort } from '../../machines/session/ports.ts';
import { buildAgentPrompt } from '../../machines/session/prompt.ts';
import { ProviderPause, throttleOfError } from '../mistral/retry-after.ts';
import { ModelCallSpan } from '../telemetry/model-call-span.ts';
import { TurnTraces } from '../telemetry/turn-traces.ts';

/** Replies are spoken: short is kind, and a bound keeps a runaway stream cheap. */
const MAX_OUTPUT_TOKENS = 300;

const SEARCH_MEMORY_INPUT = z.object({ query: z.string().min(1).max(300) });

/** Built once: its JSON schema is a constant, not converted from zod on every turn. */
export const SEARCH_MEMORY_TOOL: LanguageModelV4FunctionTool = {
  type: 'function',
  name: 'search_memory',
  description: [
    'Cherche dans les souvenirs plus anciens de la personne (anciennes conversations et faits connus).',
    "À n'utiliser que si la personne fait allusion à quelque chose d'ancien que le contexte ne contient pas.",
  ].join(' '),
  inputSchema: z.toJSONSchema(SEARCH_MEMORY_INPUT, { target: 'draft-7', io: 'input' }) as LanguageModelV4FunctionTool['inputSchema'],
};

/**
 * Flux 3, straight on the provider's language model (`doStream`), as the AI SDK's `streamText`
 * would call it, without its per-call machinery (a chain of web streams, telemetry spans, schema
 * conversion), which cost the turn about a millisecond at the median and several at p90.
 * At most two steps: with `memory`, the model may call `search_memory` (tier 3) once, and the
 * second step must answer (tool choice `none`): a turn never loops on tools. Retries are the
 * machine's decision (one, within the turn budget); errors surface as a thrown exception, and an
 * abort ends the stream (the fetch is aborted through `signal`). Each model call is a GenAI span of
 * the senior's turn (`traces`), which stands in for the AI SDK's telemetry this skips.
 * The provider's Retry-After: a 429 (or a 503 naming one) pauses the agent (`pause`, shared by every
 * session) and fails the call with AgentThrottledError, which the machine answers with the SOS line
 * and no retry; a later call goes out once the pause is over (the machine calls the agent meanwhile
 * only if the pause leaves it time within the turn's budget, and an abort ends the wait).
 */
export class AgentFluxAdapter implements AgentPort {
  private readonly model: LanguageModelV4;
  private readonly memory?: MemorySearchPort;
  private readonly traces: TurnTraces;
  private readonly pause: ProviderPause;

  constructor(
    model: LanguageModelV4,
    memory?: MemorySearchPort,
    traces: TurnTraces = new TurnTraces(),
    pause: ProviderPause = new ProviderPause(),
  ) {
    this.model = model;
    this.memory = memory;
    this.traces = traces;
    this.pause = pause;
  }

  async *stream(request: AgentRequest, signal: AbortSignal): AsyncIterable<AgentChunk> {
    const prompt = buildAgentPrompt(request);
    const messages: LanguageModelV4Message[] = [
      { role: 'system', content: prompt.system },
      ...prompt.messages.map((m) => ({ role: m.role, content: [{ type: 'text' as const, text: m.content }] })),
    ];
    if (!this.memory) {
      yield* this.step(request.seniorId, messages, {}, signal);
      return;
    }
    const tools = [SEARCH_MEMORY_TOOL];
    const first = yield* this.step(request.seniorId, messages, { tools, toolChoice: { type: 'auto' } }, signal);
    if (first.calls.length === 0) return;
    const results = await Promise.all(first.calls.map((call) => this.runTool(request.seniorId, call, signal)));
    const assistant: LanguageModelV4Message = {
      role: 'assistant',
      content: [
        ...(first.text ? [{ type: 'text' as const, text: first.text }] : []),
        ...first.calls.map((call, i) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.toolName, input: results[i]!.input })),
      ],
    };
    const answers: LanguageModelV4Message = { role: 'tool', content: results.map((r) => r.part) };
    yield* this.step(request.seniorId, [...messages, assistant, answers], { tools, toolChoice: { type: 'none' } }, signal);
  }

  /** One model call: yields its text as it comes, returns its text and tool calls. */
  private async *step(
    seniorId: string,
    prompt: LanguageModelV4Message[],
    tools: Pick<LanguageModelV4CallOptions, 'tools' | 'toolChoice'>,
    signal: AbortSignal,
  ): AsyncGenerator<AgentChunk, { text: string; calls: LanguageModelV4ToolCall[] }> {
    // Before the span: a wait for the provider's Retry-After is not the model's latency.
    await this.pause.over(signal);
    const span = ModelCallSpan.start(this.traces, seniorId, this.model, { maxTokens: MAX_OUTPUT_TOKENS, tools: tools.tools !== undefined });
    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | null = null;
    let text = '';
    const calls: LanguageModelV4ToolCall[] = [];
    try {
      reader = (await this.open({ prompt, maxOutputTokens: MAX_OUTPUT_TOKENS, abortSignal: signal, ...tools })).getReader();
      for (;;) {
        const { done, value: part } = await reader.read();
        if (done) return { text, calls };
        if (part.type === 'text-delta' && part.delta) {
          span?.firstToken();
          text += part.delta;
          yield { type: 'text', text: part.delta };
        } else if (part.type === 'tool-call') {
          span?.toolCall(part.toolName);
          calls.push(part);
          yield { type: 'tool', name: part.toolName };
        } else if (part.type === 'finish') span?.finish(part.finishReason, part.usage);
        else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error('model stream error');
      }
    } catch (err) {
      span?.fail(err);
      throw err;
    } finally {
      // Left early (abort, barge-in, an error part): the response is not read any further.
      reader?.cancel().catch(() => {});
      span?.end();
    }
  }

  /** The model's stream; an answer asking to wait (Retry-After) pauses the agent and is an AgentThrottledError. */
  private async open(options: LanguageModelV4CallOptions): Promise<ReadableStream<LanguageModelV4StreamPart>> {
    try {
      return (await this.model.doStream(options)).stream;
    } catch (err) {
      const wait = this.pause.note(throttleOfError(err));
      if (wait === null) throw err;
      throw new AgentThrottledError(`the provider asked to wait ${wait} ms (Retry-After)`, { cause: err });
    }
  }

  /** A tool call's input (parsed, for the next step's prompt) and its result. A bad call gets an error result, as with the AI SDK. */
  private async runTool(seniorId: string, call: LanguageModelV4ToolCall, signal: AbortSignal): Promise<{ input: unknown; part: LanguageModelV4ToolResultPart }> {
    const result = (output: LanguageModelV4ToolResultPart['output']): LanguageModelV4ToolResultPart => ({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output });
    let input: unknown;
    try {
      input = JSON.parse(call.input || '{}');
    } catch {
      return { input: {}, part: result({ type: 'error-text', value: 'invalid tool input: not JSON' }) };
    }
    const parsed = SEARCH_MEMORY_INPUT.safeParse(input);
    if (call.toolName !== SEARCH_MEMORY_TOOL.name || !parsed.success) return { input, part: result({ type: 'error-text', value: `invalid call to ${call.toolName}` }) };
    try {
      const found = await this.traces.stage(
        seniorId,
        `execute_tool ${SEARCH_MEMORY_TOOL.name}`,
        () => this.memory!.searchMemory(seniorId, parsed.data.query, signal),
        (found) => ({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': SEARCH_MEMORY_TOOL.name, 'kohami.memory.segments': found.segments.length, 'kohami.memory.facts': found.facts.length }),
      );
      return { input, part: result({ type: 'json', value: found as unknown as JSONValue }) };
    } catch {
      signal.throwIfAborted();
      // The model hears that it failed, never why (an error message may carry a query or a row).
      return { input, part: result({ type: 'error-text', value: 'search failed' }) };
    }
  }
}

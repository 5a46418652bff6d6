import type { LanguageModelV4CallOptions, LanguageModelV4Message } from '@ai-sdk/provider';

/** A message of Mistral's `/v1/chat/completions`, as @ai-sdk/mistral writes it. */
type MistralMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<{ type: 'text'; text: string }> }
  | { role: 'assistant'; content: string; prefix?: true; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | { role: 'tool'; name: string; tool_call_id: string; content: string };

/**
 * The streaming request body for a call, written exactly as @ai-sdk/mistral 4 writes it
 * (`getArgs` + `convertToMistralChatMessages` + `prepareTools`), for the calls the agent makes:
 * text messages, function tools and their results, the standard settings. Anything else (files,
 * reasoning parts or effort, a JSON response format, provider options, raw chunks, provider tools) is null:
 * the caller hands that call to the AI SDK's model instead.
 */
export function streamingChatBody(modelId: string, options: LanguageModelV4CallOptions): Record<string, unknown> | null {
  if (options.responseFormat?.type === 'json' || options.providerOptions?.mistral || options.includeRawChunks || options.topK !== undefined || (options.reasoning !== undefined && options.reasoning !== 'provider-default')) return null;
  const messages = chatMessages(options.prompt);
  if (!messages) return null;
  const tools = options.tools?.length ? options.tools : undefined;
  const functions = tools?.filter((tool) => tool.type === 'function');
  if (functions?.length !== tools?.length) return null;
  const mistralTools = functions?.map((tool) => ({
    type: 'function' as const,
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema, ...(tool.strict != null ? { strict: tool.strict } : {}) },
  }));
  let toolChoice: string | { type: 'function'; function: { name: string } } | undefined;
  if (mistralTools && options.toolChoice) {
    const choice = options.toolChoice;
    if (choice.type === 'auto' || choice.type === 'none') toolChoice = choice.type;
    else if (choice.type === 'required') toolChoice = 'any';
    else toolChoice = { type: 'function', function: { name: choice.toolName } };
  }
  return {
    model: modelId,
    max_tokens: options.maxOutputTokens,
    temperature: options.temperature,
    top_p: options.topP,
    ...(options.frequencyPenalty != null ? { frequency_penalty: options.frequencyPenalty } : {}),
    ...(options.presencePenalty != null ? { presence_penalty: options.presencePenalty } : {}),
    stop: options.stopSequences,
    random_seed: options.seed,
    messages,
    tools: mistralTools,
    tool_choice: toolChoice,
    stream: true,
  };
}

function chatMessages(prompt: LanguageModelV4Message[]): MistralMessage[] | null {
  const messages: MistralMessage[] = [];
  for (let i = 0; i < prompt.length; i++) {
    const message = prompt[i]!;
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const content: Array<{ type: 'text'; text: string }> = [];
        for (const part of message.content) {
          if (part.type !== 'text') return null;
          content.push({ type: 'text', text: part.text });
        }
        messages.push({ role: 'user', content });
        break;
      }
      case 'assistant': {
        let text = '';
        const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
        for (const part of message.content) {
          if (part.type === 'text') text += part.text;
          else if (part.type === 'tool-call') calls.push({ id: part.toolCallId, type: 'function', function: { name: part.toolName, arguments: JSON.stringify(part.input) } });
          else return null;
        }
        messages.push({ role: 'assistant', content: text, ...(i === prompt.length - 1 ? { prefix: true as const } : {}), ...(calls.length > 0 ? { tool_calls: calls } : {}) });
        break;
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue;
          const output = part.output;
          const content =
            output.type === 'text' || output.type === 'error-text' ? output.value : output.type === 'execution-denied' ? (output.reason ?? 'Tool call execution denied.') : JSON.stringify(output.value);
          messages.push({ role: 'tool', name: part.toolName, tool_call_id: part.toolCallId, content });
        }
        break;
    }
  }
  return messages;
}

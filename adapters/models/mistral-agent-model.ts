import { APICallError, type LanguageModelV4, type LanguageModelV4CallOptions, type LanguageModelV4StreamPart, type LanguageModelV4StreamResult } from '@ai-sdk/provider';
import type http from 'node:http';
import { streamingChatBody } from './mistral-chat-request.ts';
import { MistralChatStreamDecoder } from './mistral-chat-stream.ts';
import { MistralEndpoint, type MistralSettings } from '../mistral/mistral-endpoint.ts';

/**
 * The agent's Mistral model: a streaming call is one POST on a keep-alive connection pool, and
 * its server-sent events are decoded straight into the language-model stream parts, in one
 * stream. The AI SDK's provider makes the same request through fetch and then pipes the body
 * through four web streams with a schema check per chunk: 0.74–0.80 ms of CPU per call where this
 * takes 0.27–0.31 (a call to the end of its stream, same fake, same machine), on every agent turn.
 *
 * The request body and the parts are @ai-sdk/mistral 4's (mistral-chat-request.ts,
 * mistral-chat-stream.ts); a call outside what the agent sends (files, reasoning parts, a JSON
 * response format, provider options), and every non-streaming call, goes to that provider's model.
 * Errors are the AI SDK's: an error status or an unreachable server throws an `APICallError`
 * (retryable for 408, 409, 429, 5xx and the network), never carrying the prompt; an abort ends
 * the call and drops the connection.
 */
export class MistralAgentModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: LanguageModelV4['supportedUrls'];
  private readonly endpoint: MistralEndpoint;

  private readonly sdkModel: LanguageModelV4;

  /** Every request goes to `${baseUrl}/chat/completions`, the base URL checked here (INV-T02). */
  constructor(
    sdkModel: LanguageModelV4,
    settings: MistralSettings,
  ) {
    this.sdkModel = sdkModel;
    this.endpoint = new MistralEndpoint(settings, 'chat/completions', 'text/event-stream');
    this.provider = sdkModel.provider;
    this.modelId = sdkModel.modelId;
    this.supportedUrls = sdkModel.supportedUrls;
  }

  doGenerate(options: LanguageModelV4CallOptions): ReturnType<LanguageModelV4['doGenerate']> {
    return this.sdkModel.doGenerate(options);
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const body = streamingChatBody(this.modelId, options);
    if (!body) return this.sdkModel.doStream(options);
    options.abortSignal?.throwIfAborted();
    const text = JSON.stringify(body);
    const res = await this.post(text, definedHeaders(options.headers), options.abortSignal);
    return { stream: this.parts(res, options.abortSignal), request: { body }, response: { headers: flatHeaders(res.headers) } };
  }

  /** The response once its status is 2xx; an error status, the network or an abort rejects. */
  private async post(body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<http.IncomingMessage> {
    let res: http.IncomingMessage;
    try {
      res = await this.endpoint.send(body, signal, headers);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new APICallError({ message: `Cannot connect to API: ${(err as Error).message}`, url: this.endpoint.url, requestBodyValues: {}, cause: err, isRetryable: true });
    }
    const statusCode = res.statusCode ?? 0;
    if (statusCode >= 200 && statusCode < 300) return res;
    res.resume();
    throw new APICallError({
      message: `mistral chat answered HTTP ${statusCode}`,
      url: this.endpoint.url,
      requestBodyValues: {},
      statusCode,
      responseHeaders: flatHeaders(res.headers),
      isRetryable: statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500,
    });
  }

  /** The response's events as stream parts, in one stream; cancelling it (or the call's abort) drops the connection. */
  private parts(res: http.IncomingMessage, signal?: AbortSignal): ReadableStream<LanguageModelV4StreamPart> {
    let controller!: ReadableStreamDefaultController<LanguageModelV4StreamPart>;
    let over = false;
    const finish = (err?: unknown) => {
      if (over) return;
      over = true;
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined) return controller.close();
      res.destroy();
      controller.error(err);
    };
    const onAbort = () => finish(signal!.reason);
    return new ReadableStream<LanguageModelV4StreamPart>({
      start(c) {
        controller = c;
        // An abort between the response and this stream has already fired: it ends the stream here.
        if (signal?.aborted) return finish(signal.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        const decoder = new MistralChatStreamDecoder((part) => controller.enqueue(part));
        controller.enqueue({ type: 'stream-start', warnings: [] });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!over) decoder.push(chunk);
        });
        res.on('end', () => {
          if (over) return;
          decoder.end();
          finish();
        });
        res.on('error', (err) => finish(err));
        res.on('close', () => finish(new Error('mistral chat stream: the connection closed before the end of the stream')));
      },
      cancel() {
        if (over) return;
        over = true;
        signal?.removeEventListener('abort', onAbort);
        res.destroy();
      },
    });
  }
}

function definedHeaders(headers: LanguageModelV4CallOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

function flatHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

import type { IncomingMessage } from 'node:http';
import { EMBEDDING_DIMENSIONS, type MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { MistralEndpoint, type MistralSettings } from '../mistral/mistral-endpoint.ts';
import { delay, ProviderPause, throttleMs } from '../mistral/retry-after.ts';

export const MISTRAL_EMBED_MODEL = 'mistral-embed';
/** Per call, retry included; far above a healthy mistral-embed call (tens of ms), below any wait worth having. */
export const EMBED_TIMEOUT_MS = 10_000;
/** Inputs per request: mistral-embed's limit, as the AI SDK's provider splits batches. */
const MAX_INPUTS_PER_REQUEST = 32;
/** Before the one retry of a request the provider refused for now (429, 5xx) or that failed on the network, when it named no Retry-After: as the AI SDK waits. */
const RETRY_DELAY_MS = 2_000;

export class MistralEmbedClientDimsMismatchError extends Error {
  constructor(modelId: string, got: number) {
    super(`embedding model ${modelId} returned ${got} dimensions, expected ${EMBEDDING_DIMENSIONS}: refusing vectors that would not fit the index`);
    this.name = 'MistralEmbedClientDimsMismatchError';
  }
}

/** Mistral answered an embeddings request with an error status (its body, which may echo the input, is not kept). */
export class MistralEmbedHttpError extends Error {
  readonly retryable: boolean;
  readonly status: number;

  constructor(status: number) {
    super(`mistral embeddings answered HTTP ${status}`);
    this.status = status;
    this.name = 'MistralEmbedHttpError';
    this.retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  }
}

export class MistralEmbedTimeoutError extends Error {
  constructor(ms: number) {
    super(`mistral embeddings request over ${ms} ms`);
    this.name = 'MistralEmbedTimeoutError';
  }
}

/** The provider asked to wait (Retry-After) longer than the call's time bound allows: no request was sent. */
export class MistralEmbedThrottledError extends Error {
  constructor(leftMs: number) {
    super(`mistral embeddings asked to wait ${leftMs} ms more (Retry-After), past this call's time bound: not sent`);
    this.name = 'MistralEmbedThrottledError';
  }
}

class MistralEmbedResponseError extends Error {
  constructor(what: string) {
    super(`mistral embeddings answered ${what}`);
    this.name = 'MistralEmbedResponseError';
  }
}

/** Every request goes to `${baseUrl}/embeddings`, the base URL checked at construction (INV-T02). */
export interface MistralEmbedSettings extends MistralSettings {
  /** The model asked for, which is also the vectors' space (`modelId`); mistral-embed (1024-d) by default. */
  model?: string;
  /** No request stays open longer than this, its retry included (10 s by default). */
  timeoutMs?: number;
}

/**
 * `mistral-embed` over plain HTTP on a keep-alive connection pool: one POST of the inputs, one
 * JSON.parse of the answer. A turn's question is embedded on the senior's wait, and the AI SDK's
 * chain around the same request (web streams, an AbortSignal.any and a timeout signal per call,
 * schema validation of 1,024 numbers per vector, retry and telemetry wrappers) cost the runtime's
 * main thread more than the request itself (bench:load, `npm run bench:overhead`).
 *
 * Same contract as the AI SDK's: batches split by 32 inputs, one retry of a refused-for-now or
 * failed request, a response of the wrong width refused (a silent upstream model swap would make
 * the HNSW index incoherent), `signal` aborts the request (the connection is dropped, not left
 * open), and `timeoutMs` bounds every call whoever asked for it. A 429 (or a 503 naming a
 * Retry-After) pauses the endpoint for what it asked: every request, retries included, waits for
 * the pause's end if that comes within its call's time bound, and is not sent otherwise.
 */
export class MistralEmbedClient implements MemoryEmbedderPort {
  readonly modelId: string;
  private readonly endpoint: MistralEndpoint;
  private readonly timeoutMs: number;
  private readonly pause = new ProviderPause();

  constructor(settings: MistralEmbedSettings) {
    this.endpoint = new MistralEndpoint(settings, 'embeddings', 'application/json');
    this.modelId = settings.model ?? MISTRAL_EMBED_MODEL;
    this.timeoutMs = settings.timeoutMs ?? EMBED_TIMEOUT_MS;
  }

  /** ms left of the pause the provider asked for (Retry-After); 0 when requests may go out. */
  get pauseMs(): number {
    return this.pause.leftMs;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    signal?.throwIfAborted();
    const deadline = Date.now() + this.timeoutMs;
    if (texts.length <= MAX_INPUTS_PER_REQUEST) return this.request(texts, deadline, signal);
    const vectors: number[][] = [];
    for (let i = 0; i < texts.length; i += MAX_INPUTS_PER_REQUEST) vectors.push(...(await this.request(texts.slice(i, i + MAX_INPUTS_PER_REQUEST), deadline, signal)));
    return vectors;
  }

  /** One batch, retried once when the provider refused it for now or the network failed; each try after the endpoint's pause. */
  private async request(texts: string[], deadline: number, signal?: AbortSignal): Promise<number[][]> {
    const body = JSON.stringify({ model: this.modelId, input: texts, encoding_format: 'float' });
    await this.afterPause(deadline, signal);
    try {
      return await this.post(body, texts.length, deadline, signal);
    } catch (err) {
      if (!(err instanceof MistralEmbedHttpError ? err.retryable : isNetworkError(err)) || signal?.aborted) throw err;
      // The provider's own word when it gave one (Retry-After), else the AI SDK's delay.
      const wait = this.pause.leftMs || RETRY_DELAY_MS;
      if (deadline - Date.now() - wait <= 0) throw err;
      await delay(wait, signal);
      // Another call may have met a longer pause meanwhile.
      await this.afterPause(deadline, signal);
      return this.post(body, texts.length, deadline, signal);
    }
  }

  /** Resolves once the endpoint's pause is over; a pause that outlasts `deadline` fails the call at once, unsent. */
  private async afterPause(deadline: number, signal?: AbortSignal): Promise<void> {
    const left = this.pause.leftMs;
    if (left === 0) return;
    if (Date.now() + left >= deadline) throw new MistralEmbedThrottledError(left);
    await this.pause.over(signal);
  }

  /** One request under what is left of the call's `deadline`; whichever of it and `signal` comes first ends it. */
  private async post(body: string, count: number, deadline: number, signal?: AbortSignal): Promise<number[][]> {
    signal?.throwIfAborted();
    const call = new AbortController();
    const timer = setTimeout(() => call.abort(new MistralEmbedTimeoutError(this.timeoutMs)), Math.max(0, deadline - Date.now()));
    const onAbort = () => call.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.endpoint.send(body, call.signal);
      if (res.statusCode !== 200) {
        res.resume();
        this.pause.note(throttleMs(res.statusCode, res.headers));
        throw new MistralEmbedHttpError(res.statusCode ?? 0);
      }
      return this.vectors(await bodyText(res, call.signal), count);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The answer's vectors, in input order, each checked: `count` of them, every one 1,024 numbers. */
  private vectors(text: string, count: number): number[][] {
    let parsed: { data?: Array<{ embedding?: unknown }> };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new MistralEmbedResponseError('something that is not JSON');
    }
    const data = parsed?.data;
    if (!Array.isArray(data) || data.length !== count) throw new MistralEmbedResponseError(`${Array.isArray(data) ? data.length : 'no'} vectors for ${count} inputs`);
    return data.map(({ embedding }) => {
      if (!Array.isArray(embedding)) throw new MistralEmbedResponseError('an entry without a vector');
      if (embedding.length !== EMBEDDING_DIMENSIONS) throw new MistralEmbedClientDimsMismatchError(this.modelId, embedding.length);
      for (const x of embedding) if (typeof x !== 'number') throw new MistralEmbedResponseError('a vector that is not numbers');
      return embedding as number[];
    });
  }
}

/** A request that never got an answer (refused, reset, unreachable): worth one more try, as with the AI SDK. */
function isNetworkError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET)$/.test(code);
}

/** The whole body of `res` as text; an abort of `signal` drops the connection, rather than leave it open for an answer nobody reads. */
function bodyText(res: IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onAbort = () => {
      res.destroy();
      reject(signal.reason);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    res.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { answerRateLimited, ServiceBehaviourSet } from './fake-behaviours.ts';
import { refuseHttpRequest } from './mistral-contract.ts';

/**
 * More endpoints on the same server (e.g. the audio fakes of fake-voxtral.ts), so one base URL
 * answers everything, as MISTRAL_BASE_URL does. Each returns true when it took the request.
 */
export interface FakeMistralMount {
  request(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): boolean;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

/**
 * How the chat endpoint answers: `stall` sends its chunks then keeps the stream open without a
 * word; `break` sends its chunks then drops the connection; `malformed` sends an SSE event that is
 * not JSON.
 */
export type FakeMistralMode =
  | { kind: 'stream'; chunks: string[] }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'stall'; chunks: string[] }
  | { kind: 'break'; chunks: string[] }
  | { kind: 'malformed' };

/** A structured call as the fake sees it: its system and user texts, and the JSON schema it asks for (as text). */
export interface StructuredCall {
  system: string;
  user: string;
  schema: string;
}

/**
 * A local stand-in for Mistral's `/v1/chat/completions`, speaking its SSE stream
 * format, so the real @ai-sdk/mistral adapter runs unchanged against it.
 */
export class FakeMistral {
  mode: FakeMistralMode = { kind: 'stream', chunks: ['Bonjour.'] };
  /** The service behaviours played on chat (streamed or not) and embeddings: `rate-limited` only, so far. */
  readonly behaviours = new ServiceBehaviourSet();
  /** The `Retry-After` of a `rate-limited` refusal: delay-seconds or an HTTP date (the behaviour's is 1 s). */
  rateLimitRetryAfter = '1';
  /** Each `rate-limited` refusal: its endpoint and when it was answered (Date.now()). */
  readonly rateLimited: Array<{ endpoint: 'chat' | 'embeddings'; at: number }> = [];
  /** Width of the vectors `/v1/embeddings` returns (1024 is mistral-embed's). */
  embeddingDims = 1024;
  /** An HTTP status for `/v1/embeddings`, or 'hang' for a request never answered. */
  embeddingStatus: number | 'hang' = 200;
  /** Fixed latencies (benchmarks): the chat stream's first byte and each embeddings answer wait this long. */
  chatFirstByteMs = 0;
  embeddingLatencyMs = 0;
  /**
   * How a structured (non-streaming) chat call — a sub-agent's — is answered: the JSON value this
   * returns for the call, sent as the message content of a `chat.completion`. Unset: such calls get
   * the stream mode's chunks as one `chat.completion` (text, which the sub-agents' adapter refuses).
   */
  structured: ((call: StructuredCall) => unknown) | null = null;
  /**
   * Non-streaming chat calls (the sub-agents' `doGenerate`): the JSON their message holds, from the
   * request body (its `response_format` says which schema is asked). Null: they get the stream mode.
   */
  generate: ((body: Record<string, unknown>) => unknown) | null = null;
  /** How long a non-streaming chat call waits before its answer (or its injected failure). */
  generateLatencyMs = 0;
  /** Failures for the next non-streaming chat calls, one each, in order: a status and its headers (Retry-After…). */
  readonly failNext: Array<{ status: number; headers?: Record<string, string> }> = [];
  /** Each non-streaming chat call: when it arrived and was answered (Date.now()), and its status. */
  readonly generateLog: Array<{ at: number; answeredAt: number; status: number }> = [];
  /** The vector of one input; by default a deterministic one-hot vector (the same text, the same vector). */
  embed: ((text: string) => number[]) | null = null;
  /** Requests whose connection is still open, by endpoint: what a runtime that never aborts piles up. */
  readonly open = { chat: 0, embeddings: 0 };
  /** Chat requests whose client closed the connection before the answer was whole (aborted calls). */
  chatAborted = 0;
  /** Called as each chat request arrives, before its mode is read (tests order it against a kiosk's frames, or set its mode). */
  onChatRequest: ((body: Record<string, unknown>) => void) | null = null;
  readonly requests: Array<{ path: string; body: Record<string, unknown>; authorization?: string }> = [];
  /** TCP connections accepted so far: a client that keeps its connections alive opens few. */
  connections = 0;
  private server!: Server;
  baseUrl = '';

  private readonly mount?: FakeMistralMount;

  constructor(mount?: FakeMistralMount) {
    this.mount = mount;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        if (refuseHttpRequest(req, res, body)) return;
        if (this.mount?.request(req, res, body)) return;
        // Without the audio fakes mounted, their endpoints are not found (the runtime's voice check warns and starts).
        if (req.url?.startsWith('/v1/audio/')) return void res.writeHead(404).end();
        this.requests.push({ path: req.url ?? '', body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
        const endpoint = req.url?.endsWith('/embeddings') ? 'embeddings' : 'chat';
        this.open[endpoint] += 1;
        res.once('close', () => (this.open[endpoint] -= 1));
        if (endpoint === 'embeddings') {
          if (this.behaviours.rateLimits(endpoint)) return this.refuse(endpoint, res);
          if (this.embeddingLatencyMs > 0) return void setTimeout(() => this.embeddings(body, res), this.embeddingLatencyMs);
          return this.embeddings(body, res);
        }
        this.onChatRequest?.(body);
        res.once('close', () => {
          if (!res.writableEnded) this.chatAborted += 1;
        });
        if (this.behaviours.rateLimits(endpoint)) return this.refuse(endpoint, res);
        if (this.generate && body.stream !== true) {
          const arrivedAt = Date.now();
          return void setTimeout(() => this.generated(body, res, arrivedAt), this.generateLatencyMs);
        }
        const mode = this.mode;
        if (mode.kind === 'hang') return;
        if (body.stream !== true && this.structured && mode.kind !== 'status') {
          const answer = this.structured;
          return void setTimeout(() => this.structuredAnswer(answer, body, res), this.generateLatencyMs);
        }
        if (this.chatFirstByteMs > 0) return void setTimeout(() => this.chat(mode, body, res), this.chatFirstByteMs);
        this.chat(mode, body, res);
      });
    });
    this.server.on('connection', () => (this.connections += 1));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!this.mount?.upgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** `rate-limited`: the 429 that refuses a call, logged. */
  private refuse(endpoint: 'chat' | 'embeddings', res: ServerResponse): void {
    answerRateLimited(res, this.rateLimitRetryAfter);
    this.rateLimited.push({ endpoint, at: Date.now() });
  }

  /** Answers one chat request in `mode` (its latency, if any, already waited). */
  private chat(mode: Exclude<FakeMistralMode, { kind: 'hang' }>, body: Record<string, unknown>, res: ServerResponse): void {
    if (mode.kind === 'status') {
      res.writeHead(mode.status, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'error', message: 'service unavailable', type: 'service_unavailable' }));
    }
    // A call that did not ask for a stream gets none: Mistral answers it with one chat.completion.
    if (body.stream !== true && mode.kind === 'stream') return completion(res, body, mode.chunks.join(''));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (mode.kind === 'malformed') return void res.end('data: {"choices": [{"delta": {"content": "Bon\n\ndata: [DONE]\n\n');
    const base = { id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: String(body.model) };
    for (const content of mode.chunks) {
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] })}\n\n`);
    }
    if (mode.kind === 'stall') return;
    // Dropped once the chunks have left, so the client has read them before the connection dies.
    if (mode.kind === 'break') return void res.write(':\n\n', () => setTimeout(() => res.socket?.destroy(), 20));
    res.write(
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  }

  /** Answers one non-streaming chat call: the next injected failure, or `generate`'s JSON as Mistral's chat completion. */
  private generated(body: Record<string, unknown>, res: ServerResponse, at: number): void {
    const failure = this.failNext.shift();
    this.generateLog.push({ at, answeredAt: Date.now(), status: failure?.status ?? 200 });
    if (failure) {
      res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
      return void res.end(JSON.stringify({ object: 'error', message: 'rate limited or unavailable', type: 'service_unavailable' }));
    }
    const content = JSON.stringify(this.generate!(body));
    completion(res, body, content);
  }

  /** The agent's streamed replies (the sub-agents' structured calls are not streamed). */
  get agentRequests() {
    return this.chatRequests.filter((r) => r.body.stream === true);
  }

  private structuredAnswer(answer: (call: StructuredCall) => unknown, body: Record<string, unknown>, res: ServerResponse): void {
    const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
    const text = (role: string) =>
      messages
        .filter((m) => m.role === role)
        .map((m) => (typeof m.content === 'string' ? m.content : (m.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('')))
        .join('\n');
    const format = body.response_format as { json_schema?: { schema?: unknown } } | undefined;
    const content = JSON.stringify(answer({ system: text('system'), user: text('user'), schema: JSON.stringify(format?.json_schema?.schema ?? {}) }));
    completion(res, body, content);
  }

  get chatRequests() {
    return this.requests.filter((r) => r.path.endsWith('/chat/completions'));
  }

  /** One deterministic vector per input (`embed`, or a one-hot unit vector): the same text, the same vector. */
  private embeddings(body: Record<string, unknown>, res: ServerResponse): void {
    if (this.embeddingStatus === 'hang') return;
    if (this.embeddingStatus !== 200) {
      res.writeHead(this.embeddingStatus, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'error', message: 'unavailable' }));
    }
    const inputs = body.input as string[];
    const data = inputs.map((text, index) => {
      if (this.embed) return { object: 'embedding', embedding: this.embed(text), index };
      const embedding = new Array<number>(this.embeddingDims).fill(0);
      let h = 0;
      for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      embedding[h % this.embeddingDims] = 1;
      return { object: 'embedding', embedding, index };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'emb-1', object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A non-streaming answer: `content` as the assistant message of Mistral's `chat.completion`. */
function completion(res: ServerResponse, body: Record<string, unknown>, content: string): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'cmpl-1',
      object: 'chat.completion',
      created: 1,
      model: String(body.model),
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    }),
  );
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A held fact as the fact extractor's prompt shows it (« F1 (contacts) : Sa fille Claire vit à Lyon. »). */
export interface ShownFact {
  ref: string;
  category: string;
  content: string;
}

/** The held facts a reconciling extraction call was shown, in order: what a fake answer may target. */
export function heldFactsShown(call: StructuredCall): ShownFact[] {
  return [...call.user.matchAll(/^(F\d+) \(([a-z]+)\) : (.+)$/gmu)].map((m) => ({ ref: m[1]!, category: m[2]!, content: m[3]! }));
}

/** One entry of the reconciliation format (`{facts: [...]}`), with the nulls the strict schema asks for. */
export function factOperation(entry: { op: 'add' | 'update' | 'invalidate' | 'none'; target?: string; content?: string; category?: string; confidence?: number }) {
  return { target: null, content: null, category: null, confidence: 0.9, ...entry };
}

/** Whether a structured call is the fact extraction (its schema asks for `facts` with an `op`). */
export const isFactExtraction = (call: StructuredCall) => call.schema.includes('"facts"') && call.schema.includes('"op"');

/**
 * `FakeMistral.generate` for the sub-agents: a fixed answer per schema asked (mood score,
 * summary, facts), read from the request's `response_format`.
 */
export function subagentAnswers(answers: { score?: number; summary?: string; facts?: unknown[] } = {}) {
  return (body: Record<string, unknown>): unknown => {
    const schema = JSON.stringify(body.response_format ?? '');
    if (schema.includes('"score"')) return { score: answers.score ?? 64 };
    if (schema.includes('"summary"')) return { summary: answers.summary ?? 'Le senior a parlé de sa journée au jardin.' };
    return { facts: answers.facts ?? [] };
  };
}

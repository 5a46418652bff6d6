import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

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

/**
 * A local stand-in for Mistral's `/v1/chat/completions`, speaking its SSE stream
 * format, so the real @ai-sdk/mistral adapter runs unchanged against it.
 */
export class FakeMistral {
  mode: FakeMistralMode = { kind: 'stream', chunks: ['Bonjour.'] };
  /** Width of the vectors `/v1/embeddings` returns (1024 is mistral-embed's). */
  embeddingDims = 1024;
  /** An HTTP status for `/v1/embeddings`, or 'hang' for a request never answered. */
  embeddingStatus: number | 'hang' = 200;
  /** Fixed latencies (benchmarks): the chat stream's first byte and each embeddings answer wait this long. */
  chatFirstByteMs = 0;
  embeddingLatencyMs = 0;
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

  constructor(private readonly mount?: FakeMistralMount) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        if (this.mount?.request(req, res, body)) return;
        this.requests.push({ path: req.url ?? '', body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
        const endpoint = req.url?.endsWith('/embeddings') ? 'embeddings' : 'chat';
        this.open[endpoint] += 1;
        res.once('close', () => (this.open[endpoint] -= 1));
        if (endpoint === 'embeddings') {
          if (this.embeddingLatencyMs > 0) return void setTimeout(() => this.embeddings(body, res), this.embeddingLatencyMs);
          return this.embeddings(body, res);
        }
        this.onChatRequest?.(body);
        res.once('close', () => {
          if (!res.writableEnded) this.chatAborted += 1;
        });
        const mode = this.mode;
        if (mode.kind === 'hang') return;
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

  /** Answers one chat request in `mode` (its latency, if any, already waited). */
  private chat(mode: Exclude<FakeMistralMode, { kind: 'hang' }>, body: Record<string, unknown>, res: ServerResponse): void {
    if (mode.kind === 'status') {
      res.writeHead(mode.status, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'error', message: 'service unavailable', type: 'service_unavailable' }));
    }
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

  /** The agent's streamed replies (the sub-agents' structured calls are not streamed). */
  get agentRequests() {
    return this.chatRequests.filter((r) => r.body.stream === true);
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

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeMistralMode = { kind: 'stream'; chunks: string[] } | { kind: 'status'; status: number } | { kind: 'hang' };

/**
 * A local stand-in for Mistral's `/v1/chat/completions`, speaking its SSE stream
 * format, so the real @ai-sdk/mistral adapter runs unchanged against it.
 */
export class FakeMistral {
  mode: FakeMistralMode = { kind: 'stream', chunks: ['Bonjour.'] };
  readonly requests: Array<{ path: string; body: Record<string, unknown>; authorization?: string }> = [];
  private server!: Server;
  baseUrl = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        this.requests.push({ path: req.url ?? '', body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
        const mode = this.mode;
        if (mode.kind === 'hang') return;
        if (mode.kind === 'status') {
          res.writeHead(mode.status, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ object: 'error', message: 'service unavailable', type: 'service_unavailable' }));
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const base = { id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: String(body.model) };
        for (const content of mode.chunks) {
          res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] })}\n\n`);
        }
        res.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
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

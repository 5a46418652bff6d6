import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Edge {
  uuid: string;
  fact: string;
  name: string;
  created_at: string;
}

/**
 * A local stand-in for the subset of Zep's v2 API that ZepMemoryAdapter uses, with
 * Zep's own refusals: 401 on a bad key, 404 for an unknown user, 400 for a fact over
 * 50 characters. `mode` makes it fail (500) or hang, for the dual-write paths.
 */
export class FakeZep {
  mode: 'ok' | 'error' | 'hang' = 'ok';
  readonly users = new Map<string, Edge[]>();
  readonly calls: string[] = [];
  private server!: Server;
  url = '';

  readonly apiKey: string;

  constructor(apiKey = 'zep-test-key') {
    this.apiKey = apiKey;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>) : {};
    this.calls.push(`${req.method} ${req.url}`);
    if (this.mode === 'hang') return;
    const send = (status: number, payload?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    if (this.mode === 'error') return send(500, { message: 'internal error' });
    if (req.headers.authorization !== `Api-Key ${this.apiKey}`) return send(401, { message: 'unauthorized' });

    const url = req.url ?? '';
    if (req.method === 'POST' && url === '/api/v2/users') {
      const id = String(body.user_id);
      if (this.users.has(id)) return send(400, { message: 'user already exists' });
      this.users.set(id, []);
      return send(201, { user_id: id });
    }
    if (req.method === 'POST' && url === '/api/v2/graph/add-fact-triple') {
      const edges = this.users.get(String(body.user_id));
      if (!edges) return send(404, { message: 'user not found' });
      const fact = String(body.fact);
      if (fact.length > 50 || !/^[A-Z_]+$/.test(String(body.fact_name))) return send(400, { message: 'invalid triple' });
      const edge = { uuid: String(body.fact_uuid ?? randomUUID()), fact, name: String(body.fact_name), created_at: new Date().toISOString() };
      edges.push(edge);
      return send(200, { edge });
    }
    if (req.method === 'POST' && url === '/api/v2/graph/search') {
      const edges = this.users.get(String(body.user_id));
      if (!edges) return send(404, { message: 'user not found' });
      const words = new Set(String(body.query).toLowerCase().split(/\W+/u).filter(Boolean));
      const score = (e: Edge) => e.fact.toLowerCase().split(/\W+/u).filter((w) => words.has(w)).length;
      const ranked = [...edges].sort((a, b) => score(b) - score(a)).slice(0, Number(body.limit ?? 10));
      return send(200, { edges: ranked });
    }
    const list = /^\/api\/v2\/graph\/edge\/user\/([^/]+)$/.exec(url);
    if (req.method === 'POST' && list) {
      const edges = this.users.get(decodeURIComponent(list[1]!));
      return edges ? send(200, edges) : send(404, { message: 'user not found' });
    }
    const edge = /^\/api\/v2\/graph\/edge\/([^/]+)$/.exec(url);
    if (req.method === 'DELETE' && edge) {
      const uuid = decodeURIComponent(edge[1]!);
      for (const edges of this.users.values()) {
        const at = edges.findIndex((e) => e.uuid === uuid);
        if (at < 0) continue;
        edges.splice(at, 1);
        return send(200, { message: 'deleted' });
      }
      return send(404, { message: 'edge not found' });
    }
    const user = /^\/api\/v2\/users\/([^/]+)$/.exec(url);
    if (req.method === 'DELETE' && user) {
      return this.users.delete(decodeURIComponent(user[1]!)) ? send(200, { message: 'deleted' }) : send(404, { message: 'user not found' });
    }
    send(404, { message: 'no route' });
  }
}

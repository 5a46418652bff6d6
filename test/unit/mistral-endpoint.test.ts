import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MistralEndpoint } from '../../adapters/mistral/mistral-endpoint.ts';

/**
 * A server that answers each connection's first request and, when told to, cuts the connection on
 * the next one without answering — what a server closing an idle kept-alive connection looks like
 * to a client that reused it at that instant.
 */
describe('MistralEndpoint.send, shared by the agent model and the embedding client', () => {
  let server: http.Server;
  let baseUrl: string;
  let requests = 0;
  let connections = 0;
  let cutReused = false;
  let hang = false;
  let cutAll = false;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests += 1;
      const onSocket = (req.socket as { served?: number }).served ?? 0;
      (req.socket as { served?: number }).served = onSocket + 1;
      req.resume();
      if (hang) return;
      if (cutAll) return req.socket.destroy();
      if (cutReused && onSocket > 0) return req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const body = async (res: http.IncomingMessage) => {
    let text = '';
    for await (const chunk of res) text += chunk;
    return text;
  };

  it('asks again once, on a new connection, when a reused kept-alive connection is cut before any answer', async () => {
    const endpoint = new MistralEndpoint({ apiKey: 'k', baseUrl, env: 'test' }, 'embeddings', 'application/json');
    cutReused = false;
    expect(await body(await endpoint.send('{}'))).toBe('{"ok":true}');
    cutReused = true;
    const [r0, c0] = [requests, connections];
    const res = await endpoint.send('{}');
    expect(res.statusCode).toBe(200);
    expect(await body(res)).toBe('{"ok":true}');
    // The reused connection took the request and was cut; the same request went again on a new one.
    expect(requests - r0).toBe(2);
    expect(connections - c0).toBe(1);
  });

  it('never asks again when a fresh connection is cut: that is the server refusing, not a stale socket', async () => {
    const endpoint = new MistralEndpoint({ apiKey: 'k', baseUrl, env: 'test' }, 'embeddings', 'application/json');
    cutAll = true;
    try {
      const r0 = requests;
      await expect(endpoint.send('{}')).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(requests - r0).toBe(1);
    } finally {
      cutAll = false;
    }
  });

  it('an abort before the answer rejects with its reason and drops the request', async () => {
    const endpoint = new MistralEndpoint({ apiKey: 'k', baseUrl, env: 'test' }, 'chat/completions', 'text/event-stream');
    hang = true;
    try {
      const controller = new AbortController();
      const r0 = requests;
      const sent = endpoint.send('{}', controller.signal);
      await expect.poll(() => requests).toBeGreaterThan(r0);
      const reason = new Error('turn over');
      controller.abort(reason);
      await expect(sent).rejects.toBe(reason);
      const aborted = new AbortController();
      aborted.abort(reason);
      await expect(endpoint.send('{}', aborted.signal)).rejects.toBe(reason);
    } finally {
      hang = false;
    }
  });
});

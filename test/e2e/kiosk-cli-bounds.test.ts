import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { DEFAULT_BOUNDS } from '@kohami/kiosk-client';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { KIOSK_TOKEN, startTestRuntime } from '../support/runtime.ts';

/**
 * `npm run kiosk` (text mode) spawned as a process against hosts that are not a kohami runtime: every
 * wait has a bound, and each case ends with a clear message on stderr and exit code 1. The cases of a
 * bound shorten it through KOHAMI_KIOSK_WAIT_MS, so no test waits ten seconds. Each test has the
 * `external` project's bound (vitest.config.ts): a child process, or a runtime, starts first.
 */

const NODE = process.execPath;
const CLI = path.resolve('runtime/cli/kiosk.ts');
const WAIT_MS = 300;
const closers: Array<() => void> = [];

afterEach(() => {
  for (const close of closers.splice(0)) close();
});

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs the CLI on its own wait bounds, or on `waitMs` for the cases whose subject is a bound (a short
 * bound elsewhere would race a loaded machine's connect: « no answer … within 0.3 s » instead of the
 * answer under test); its stdin stays open, as a terminal's would, unless `input` is piped.
 */
async function kiosk(url: string, args: string[] = [], token = 'kiosk_any_token_0000', input?: string, waitMs: number | null = null): Promise<Ended> {
  const started = performance.now();
  const child = spawn(NODE, [CLI, '--url', url, '--token', token, ...args], {
    env: { ...process.env, ...(waitMs === null ? {} : { KOHAMI_KIOSK_WAIT_MS: String(waitMs) }), DEV_KIOSK_TOKEN: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (input !== undefined) child.stdin.end(input);
  // Bounded: a CLI that waits past both of its own bounds fails the test (killed) instead of hanging it.
  const killer = setTimeout(() => child.kill('SIGKILL'), (waitMs === null ? DEFAULT_BOUNDS.connectTimeoutMs + DEFAULT_BOUNDS.readyTimeoutMs : 2 * waitMs) + 5_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(killer);
  return { code, stdout, stderr, ms: performance.now() - started };
}

async function listening(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/kiosk`;
}

async function wsServer(onConnection: (ws: import('ws').WebSocket) => void): Promise<{ url: string; received: string[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const received: string[] = [];
  wss.on('connection', (ws) => {
    ws.on('message', (data) => received.push(data.toString()));
    onConnection(ws);
  });
  closers.push(() => {
    for (const client of wss.clients) client.terminate();
    wss.close();
  });
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/kiosk`, received };
}

describe('npm run kiosk (text mode): bounded waits and foreign answers', () => {
  it('a host that takes the TCP connection and never answers the handshake: exit 1 after the bound', async () => {
    const sockets: Socket[] = [];
    const server = createServer((s) => {
      sockets.push(s);
      s.resume();
    });
    const url = await listening(server);
    closers.push(() => {
      server.close();
      for (const s of sockets) s.destroy();
    });
    const ended = await kiosk(url, [], undefined, undefined, WAIT_MS);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`no answer from ${url} within 0.3 s (is a kohami runtime listening there?)\n`);
    expect(ended.ms).toBeGreaterThanOrEqual(WAIT_MS);
    expect(sockets).toHaveLength(1);
  });

  it('a WebSocket server that never answers session.start: exit 1 after the bound', async () => {
    const { url, received } = await wsServer(() => {});
    // The same bound covers the connection first: a local one, but a loaded machine can keep a young
    // process from seeing it open for 0.3 s (it did: « no answer … within 0.3 s »).
    const waitMs = 10 * WAIT_MS;
    const ended = await kiosk(url, ['--resume'], undefined, undefined, waitMs);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`${url} accepted the connection but started no session within ${waitMs / 1000} s (is it a kohami runtime?)\n`);
    expect(ended.ms).toBeGreaterThanOrEqual(waitMs);
    expect(received.map((r) => JSON.parse(r) as unknown)).toEqual([{ type: 'session.start', resume: true }]);
  });

  it.each([
    ['an HTML page', '<html><body>Bienvenue</body></html>'],
    ['JSON that is not a kiosk frame', '[1,2,3]'],
  ])('a WebSocket server that answers with %s: exit 1 with a message, no stack trace', async (_label, answer) => {
    const { url } = await wsServer((ws) => ws.on('message', () => ws.send(answer)));
    const ended = await kiosk(url);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`${url} sent a frame that is not the kiosk protocol: is it a kohami runtime?\n`);
  });

  it('an HTTP server that answers the upgrade with a web page: exit 1 naming the status, not the token', async () => {
    const server = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>'));
    const url = await listening(server as unknown as Server);
    closers.push(() => server.close());
    const ended = await kiosk(url);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe(`refused: HTTP 200 (is ${url} a kohami runtime's kiosk socket?)\n`);
  });

  it('a WebSocket server that closes before any session: exit 1', async () => {
    const { url } = await wsServer((ws) => ws.close());
    const ended = await kiosk(url);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe('the runtime closed the connection before the session started\n');
  });

  it('--help documents the wait override and the exit codes', async () => {
    const ended = await kiosk('ws://127.0.0.1:9/v1/kiosk', ['--help']);
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain('KOHAMI_KIOSK_WAIT_MS');
    expect(ended.stdout).toContain('exit codes: 0 session over, 1 connection');
  });

  it('KOHAMI_KIOSK_WAIT_MS that is not a positive number: exit 2', async () => {
    const child = spawn(NODE, [CLI, '--token', 'kiosk_any_token_0000'], { env: { ...process.env, KOHAMI_KIOSK_WAIT_MS: 'soon' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(stderr).toBe('KOHAMI_KIOSK_WAIT_MS takes a number of milliseconds above 0\n');
  });

  it('against the real runtime, the bounded waits change nothing: a piped conversation runs and ends with exit 0', async () => {
    const rt = await startTestRuntime();
    try {
      const ended = await kiosk(rt.wsUrl, [], KIOSK_TOKEN, 'Bonjour\n/end\n');
      expect(ended.stderr).toBe('');
      expect(ended.code).toBe(0);
      expect(ended.stdout).toMatch(/^session [0-9a-f-]{36} — type a sentence/);
      expect(ended.stdout).toContain('kohami> ');
      expect(ended.stdout).toContain('[session closed: ended]');
    } finally {
      await rt.close();
    }
  });
});

import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A local server that speaks as much of the kiosk protocol as a test scripts, or refuses: what a
 * hostile or broken host does that the real runtime never would (bad frames, no answers, 503s).
 */
export class LocalServer {
  readonly url: string;
  /** Each upgrade request, in order: `accept` says whether it gets a WebSocket or an HTTP `refuseWith`. */
  readonly upgrades: IncomingMessage[] = [];
  readonly received: Array<string | Buffer> = [];
  readonly sockets: WebSocket[] = [];
  accept = true;
  refuseWith = 503;
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly waiters: Array<() => void> = [];

  private constructor(server: Server, url: string, onConnection: (ws: WebSocket, server: LocalServer) => void) {
    this.server = server;
    this.url = url;
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      this.upgrades.push(req);
      for (const wake of this.waiters.splice(0)) wake();
      if (!this.accept) {
        socket.end(`HTTP/1.1 ${this.refuseWith} Refused\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.sockets.push(ws);
        ws.on('message', (data, isBinary) => {
          this.received.push(isBinary ? (data as Buffer) : data.toString());
          for (const wake of this.waiters.splice(0)) wake();
        });
        onConnection(ws, this);
      });
    });
  }

  static async start(onConnection: (ws: WebSocket, server: LocalServer) => void = () => {}): Promise<LocalServer> {
    const server = createServer((_req, res) => res.writeHead(404).end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new LocalServer(server, `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/kiosk`, onConnection);
  }

  /**
   * Resolves once `done()` holds, checked on each upgrade and each frame received: an event, not a
   * poll (a poll would move fake timers on).
   */
  async until(done: () => boolean): Promise<void> {
    while (!done()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** The JSON frames received, parsed. */
  frames(): Array<Record<string, unknown>> {
    return this.received.filter((r): r is string => typeof r === 'string').map((r) => JSON.parse(r) as Record<string, unknown>);
  }

  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Answers every session.start with a session.ready (voice when asked), then calls `then`. */
export function answersStart(then: (ws: WebSocket) => void = () => {}, sessionId = 'local-session'): (ws: WebSocket) => void {
  return (ws) =>
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(data.toString()) as { type: string; resume?: boolean; mode?: string };
      if (frame.type !== 'session.start') return;
      const voice = frame.mode === 'voice' ? { mode: 'voice', audio: { input: { encoding: 'pcm_s16le', sampleRate: 16000 }, output: { encoding: 'pcm_s16le', sampleRate: 24000 }, aec: true, voiceInput: true } } : {};
      ws.send(JSON.stringify({ type: 'session.ready', sessionId, seniorId: 'senior', resumed: frame.resume === true, ...voice }));
      then(ws);
    });
}

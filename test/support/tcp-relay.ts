import { createServer, Socket, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay in front of a loopback fake, for the network faults a fake cannot make itself:
 * - `freeze()` stops relaying the connections open at that moment in both directions without closing
 *   them: a network cut as a kiosk's router makes one, where no FIN or close frame ever arrives.
 *   Connections made afterwards are relayed normally.
 * - `dropWebSocketsAfter`: every WebSocket connection (an HTTP upgrade) is accepted, then cut once
 *   the client has sent that many bytes after its upgrade request, as a proxy or a service that
 *   drops its sockets does. Plain HTTP requests (speech) pass untouched.
 * - `cut()` closes every connection and refuses new ones until `resume()`: a database restarting.
 * The target may be a Unix socket (`{ path }`), as the wire PGlite server listens on.
 */
export class TcpRelay {
  private server: Server | undefined;
  private readonly pairs: Array<{ client: Socket; upstream: Socket; frozen: boolean }> = [];
  /** Bytes relayed from the service to the client (a pong is some). */
  downBytes = 0;
  /** Bytes the clients sent on WebSocket connections, upgrade requests included (what a socket storm costs). */
  webSocketBytes = 0;
  /** performance.now() of each WebSocket connection's upgrade request, in order. */
  readonly webSocketOpenedAt: number[] = [];
  dropWebSocketsAfter: number | null = null;
  url = '';
  port = 0;
  private refusing = false;

  async start(target: URL | { path: string }): Promise<this> {
    this.server = createServer((client) => {
      if (this.refusing) return void client.destroy();
      const upstream = new Socket();
      const pair = { client, upstream, frozen: false };
      this.pairs.push(pair);
      if ('path' in target) upstream.connect(target.path);
      else upstream.connect(Number(target.port), target.hostname);
      let webSocket: boolean | undefined;
      let sentAfterUpgrade = 0;
      client.on('data', (data: Buffer) => {
        if (pair.frozen) return;
        if (webSocket === undefined) {
          webSocket = /^upgrade:\s*websocket/im.test(data.toString('latin1'));
          if (webSocket) this.webSocketOpenedAt.push(performance.now());
        } else if (webSocket) {
          sentAfterUpgrade += data.length;
        }
        if (webSocket) this.webSocketBytes += data.length;
        if (webSocket && this.dropWebSocketsAfter !== null && sentAfterUpgrade > this.dropWebSocketsAfter) return end();
        upstream.write(data);
      });
      upstream.on('data', (data: Buffer) => {
        if (pair.frozen) return;
        this.downBytes += data.length;
        client.write(data);
      });
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}/v1`;
    return this;
  }

  cut(): void {
    this.refusing = true;
    for (const { client, upstream } of this.pairs.splice(0)) {
      client.destroy();
      upstream.destroy();
    }
  }

  resume(): void {
    this.refusing = false;
  }

  freeze(): void {
    for (const pair of this.pairs) pair.frozen = true;
  }

  async stop(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

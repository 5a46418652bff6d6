import WebSocket from 'ws';

export type Frame = Record<string, unknown> & { type: string };

/** A real kiosk over a real socket, with a way to wait for the next matching frame. */
export class KioskClient {
  readonly frames: Frame[] = [];
  private readonly waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  private cursor = 0;
  closeCode: number | null = null;
  readonly closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (raw) => {
      const frame = JSON.parse(raw.toString()) as Frame;
      this.frames.push(frame);
      this.flush();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        resolve(code);
      }),
    );
  }

  static connect(url: string, token?: string, options: WebSocket.ClientOptions = {}): Promise<KioskClient> {
    const headers = token ? { authorization: `Bearer ${token}` } : undefined;
    const socket = new WebSocket(url, { ...options, ...(headers ? { headers } : {}) });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new KioskClient(socket)));
      socket.once('unexpected-response', (req, res) => {
        // With this listener set, ws leaves the refused request to us: release its socket.
        req.destroy();
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode }));
      });
      socket.once('error', reject);
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves with the next frame (after those already consumed) that matches. */
  next(match: string | ((f: Frame) => boolean), timeoutMs = 5000): Promise<Frame> {
    const test = typeof match === 'string' ? (f: Frame) => f.type === match : match;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no frame matched within ${timeoutMs} ms; got ${JSON.stringify(this.frames.slice(this.cursor))}`)), timeoutMs);
      this.waiters.push({
        match: test,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
      this.flush();
    });
  }

  async start(resume = false): Promise<Frame> {
    this.send({ type: 'session.start', resume });
    return this.next('session.ready');
  }

  /** Sends a turn and returns its `reply.done`. */
  async turn(turnId: string, transcript: string): Promise<Frame> {
    this.send({ type: 'turn', turnId, transcript });
    return this.next((f) => f.type === 'reply.done' && f.turnId === turnId);
  }

  close(): void {
    this.socket.close();
  }

  private flush(): void {
    while (this.waiters.length > 0 && this.cursor < this.frames.length) {
      const frame = this.frames[this.cursor]!;
      const index = this.waiters.findIndex((w) => w.match(frame));
      this.cursor += 1;
      if (index >= 0) this.waiters.splice(index, 1)[0]!.resolve(frame);
    }
  }
}

import { onTestFailed } from 'vitest';
import WebSocket from 'ws';

export type Frame = Record<string, unknown> & { type: string };

/**
 * How a kiosk's wait for a frame ends when no frame comes: a frame's arrival is not timed by a number
 * of its own (the machine may be loaded; a bound the runtime promises is asserted on a simulated clock),
 * so the wait lasts as long as the test does. It fails at once when the socket closes first, and a test
 * that times out while waiting says what it waited for and what came instead.
 */
export function explainIfTestFails(describe: () => string, pending: () => boolean): void {
  try {
    onTestFailed(() => {
      if (pending()) console.error(`still waiting for a frame when the test failed: ${describe()}`);
    });
  } catch {
    // Outside a test (a hook): the hook's own timeout reports it.
  }
}

/** A real kiosk over a real socket, with a way to wait for the next matching frame. */
export class KioskClient {
  readonly frames: Frame[] = [];
  private readonly waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (err: Error) => void }> = [];
  private cursor = 0;
  closeCode: number | null = null;
  readonly closed: Promise<number>;

  readonly socket: WebSocket;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (raw) => {
      const frame = JSON.parse(raw.toString()) as Frame;
      this.frames.push(frame);
      this.flush();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        resolve(code);
        this.flush();
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

  /**
   * Resolves with the next frame (after those already consumed) that matches; rejects if the socket
   * closes first. No deadline of its own: see `explainIfTestFails`.
   */
  next(match: string | ((f: Frame) => boolean)): Promise<Frame> {
    const test = typeof match === 'string' ? (f: Frame) => f.type === match : match;
    const from = this.cursor;
    let pending = true;
    explainIfTestFails(() => `${String(match)}; got ${JSON.stringify(this.frames.slice(from))}`, () => pending);
    return new Promise<Frame>((resolve, reject) => {
      this.waiters.push({ match: test, resolve, reject });
      this.flush();
    }).finally(() => (pending = false));
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
    // Every frame has come before 'close': what is still awaited never will.
    if (this.closeCode !== null) {
      for (const w of this.waiters.splice(0)) w.reject(new Error(`the socket closed (${this.closeCode}) before a frame matched; got ${JSON.stringify(this.frames)}`));
    }
  }
}

import { setTimeout as pause } from 'node:timers/promises';
import { KioskClient, type Frame } from './kiosk-client.ts';
import { startupAllowanceMs } from './manifests.ts';

/**
 * How long a reconnection keeps trying before the test gives up: as long as a runtime may take to start
 * (the deployment's allowance). A real kiosk never gives up; 20 handshakes (~15 s) failed a rolling
 * restart on a loaded machine while the restarted process was still starting.
 */
const RECONNECT_WITHIN_MS = startupAllowanceMs();
/**
 * docs/protocol.md: a refused upgrade (503 `retry-after: 1`, or the balancer's 502 while no runtime
 * takes it) means "reconnect after a short pause"; the kiosk backs off this much more at each try, up
 * to the second the runtime's retry-after asks.
 */
const BACKOFF_STEP_MS = 100;
const BACKOFF_MAX_MS = 1_000;
/**
 * A senior does not speak 20 times a second: a kiosk sends a turn at most this often, half the
 * runtime's flood limit (20 frames/s), and a turn dropped by that limit anyway is sent again after it.
 */
export const TURN_INTERVAL_MS = 100;

/**
 * A kiosk as docs/protocol.md asks one to behave behind a load balancer: when its socket drops or its
 * session closes under it (`shutdown`, a dead process), it reconnects through the balancer, sends
 * `session.start {resume: true}` again, and sends the turn it was waiting for again, same turnId (a
 * new session has seen none). Every frame it got, on every socket, is kept with its arrival time.
 */
export class ReconnectingKiosk {
  kiosk!: KioskClient;
  readonly received: Array<{ at: number; frame: Frame }> = [];
  /** When each session became ready (performance.now()), and its id. */
  readonly sessions: Array<{ at: number; sessionId: string }> = [];
  reconnects = 0;
  private lastTurnAt = -Infinity;

  private readonly url: string;
  private readonly token: string;

  private constructor(
    url: string,
    token: string,
  ) {
    this.url = url;
    this.token = token;
  }

  static async open(url: string, token: string): Promise<ReconnectingKiosk> {
    const k = new ReconnectingKiosk(url, token);
    await k.connect();
    return k;
  }

  /** Sends the turn and returns its reply.done, reconnecting as often as its session is lost meanwhile. */
  async turn(turnId: string, transcript: string): Promise<Frame> {
    for (;;) {
      const wait = this.lastTurnAt + TURN_INTERVAL_MS - performance.now();
      if (wait > 0) await pause(wait);
      this.lastTurnAt = performance.now();
      this.kiosk.send({ type: 'turn', turnId, transcript });
      const answer = await this.kiosk
        .next((f) => (f.type === 'reply.done' && f.turnId === turnId) || f.type === 'session.closed' || (f.type === 'error' && f.turnId === turnId))
        .catch(() => null);
      if (answer?.type === 'reply.done') return answer;
      if (answer?.type === 'error' && answer.code === 'rate_limited') continue;
      if (answer?.type === 'error') throw new Error(`turn ${turnId} refused: ${JSON.stringify(answer)}`);
      await this.reconnect();
    }
  }

  /** Waits until this kiosk's socket or session is lost, then reconnects (what a kiosk left idle does). */
  async resumeWhenLost(): Promise<void> {
    await this.kiosk.next('session.closed').catch(() => null);
    await this.reconnect();
  }

  close(): void {
    this.kiosk.close();
  }

  private async reconnect(): Promise<void> {
    this.reconnects += 1;
    this.kiosk.socket.terminate();
    await this.connect();
  }

  private async connect(): Promise<void> {
    const since = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const kiosk = await KioskClient.connect(this.url, this.token);
        kiosk.socket.on('message', (raw) => this.received.push({ at: performance.now(), frame: JSON.parse(raw.toString()) as Frame }));
        this.kiosk = kiosk;
        const ready = await kiosk.start(true);
        this.sessions.push({ at: performance.now(), sessionId: ready.sessionId as string });
        return;
      } catch (err) {
        // Refused (a draining runtime's 503 the balancer could not retry, a dead upstream) or lost while starting.
        if (performance.now() - since >= RECONNECT_WITHIN_MS) throw new Error(`no session after ${attempt} handshakes in ${RECONNECT_WITHIN_MS} ms`, { cause: err });
        await pause(Math.min(BACKOFF_MAX_MS, attempt * BACKOFF_STEP_MS));
      }
    }
  }
}

import pg from 'pg';
import type { Logger } from 'pino';

/** The one channel the runtime processes sharing a database signal each other on. */
export const SIGNAL_CHANNEL = 'kohami_signals';

/** `to` of a signal for every other process. */
export const EVERY_PROCESS = '*';
/** The listener's LISTEN is awaited at start-up: a server that accepts the connection and never answers must not hold the start. */
const LISTEN_TIMEOUT_MS = 5_000;

/**
 * What one process tells another, ids only (a payload is readable by anyone who can LISTEN):
 * - `takeover`: `by` claimed the senior's session; `to` must stop its session `session` now;
 * - `released`: `to`'s takeover of `session` may go on, it answers nothing any more;
 * - `erasure`: `by` published an erasure notice (every process): read the notices now.
 */
export type ProcessSignal =
  | { kind: 'takeover'; to: string; by: string; senior: string; session: string }
  | { kind: 'released'; to: string; session: string }
  | { kind: 'erasure'; to: typeof EVERY_PROCESS; by: string };

export const signalPayload = (signal: ProcessSignal): string => JSON.stringify(signal);

function parseSignal(payload: string | undefined): ProcessSignal | null {
  try {
    const s = JSON.parse(payload ?? '') as Record<string, unknown>;
    const text = (k: string) => typeof s[k] === 'string';
    if (s.kind === 'takeover' && text('to') && text('by') && text('senior') && text('session')) return s as ProcessSignal;
    if (s.kind === 'released' && text('to') && text('session')) return s as ProcessSignal;
    if (s.kind === 'erasure' && s.to === EVERY_PROCESS && text('by')) return s as ProcessSignal;
  } catch {
    // Not ours (someone else NOTIFYing on the channel): ignored.
  }
  return null;
}

/**
 * LISTEN/NOTIFY between the runtime processes on one database. The listener is one connection of
 * its own, outside the pool (a pooled connection is not idle between queries' owners, and the pool
 * would recycle it); a lost one is reopened every `reconnectMs` until `stop()`, and meanwhile the
 * signals are missed: what they speed up also happens at the next presence heartbeat.
 */
export class PgSignals {
  private client: pg.Client | null = null;
  private listening = false;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private readonly handlers = new Set<(signal: ProcessSignal) => void>();

  private readonly pool: pg.Pool;
  private readonly processId: string;
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly reconnectMs: number;

  constructor(
    pool: pg.Pool,
    processId: string,
    logger: Pick<Logger, 'warn'>,
    reconnectMs = 1_000,
  ) {
    this.pool = pool;
    this.processId = processId;
    this.logger = logger;
    this.reconnectMs = reconnectMs;
  }

  /** Whether this process hears signals now. */
  get ready(): boolean {
    return this.listening;
  }

  /** Opens the listener; a failure is logged and retried, never thrown (the heartbeats still work). */
  async start(): Promise<void> {
    const client = new pg.Client({ ...this.pool.options, query_timeout: LISTEN_TIMEOUT_MS });
    this.client = client;
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      if (this.stopped) return;
      this.logger.warn({ err }, 'signals listener lost: takeovers fall back to the presence heartbeat until it is back');
      client.end().catch(() => {});
      this.retry = setTimeout(() => void this.start(), this.reconnectMs);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel !== SIGNAL_CHANNEL) return;
      const signal = parseSignal(message.payload);
      if (!signal || !this.addressedHere(signal)) return;
      for (const handler of this.handlers) handler(signal);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${SIGNAL_CHANNEL}`);
      if (this.client === client) this.listening = !this.stopped;
    } catch (err) {
      lost(err);
    }
  }

  private addressedHere(signal: ProcessSignal): boolean {
    if (signal.to === EVERY_PROCESS) return !('by' in signal) || signal.by !== this.processId;
    return signal.to === this.processId;
  }

  /** Signals addressed to this process (or to every process, but from another). */
  on(handler: (signal: ProcessSignal) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async send(signal: ProcessSignal): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [SIGNAL_CHANNEL, signalPayload(signal)]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}

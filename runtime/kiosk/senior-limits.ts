import { TokenBucket } from './token-bucket.ts';

/**
 * What one senior's kiosks may cost this process. A kiosk token binds one senior, so these are also
 * per-token limits (a senior's several devices share them). Every `session.start` may cost about a
 * dozen database round trips; without a per-senior bound, one kiosk opening many sockets, each within
 * its own frame limit, queued every other senior's start behind its own (issue 20, item 2).
 */
export interface SeniorLimitSettings {
  /** Sockets open (or upgrading) at once per senior; more are refused with HTTP 429 at the upgrade. */
  socketsPerSenior: number;
  /** `session.start` frames a senior's sockets may send at once… */
  startsBurst: number;
  /** …and then per minute; more are refused with `error {code: "start_rate_limited"}`. */
  startsPerMinute: number;
}

/**
 * Seniors tracked at once. An entry lives while the senior has a socket, then until its start bucket
 * has refilled (at most `startsBurst / startsPerMinute` minutes, swept at each kiosk heartbeat): this
 * bounds the map if sockets come and go faster than that for this many seniors.
 */
export const MAX_TRACKED_SENIORS = 100_000;

interface SeniorState {
  sockets: number;
  starts: TokenBucket;
}

export type SocketAdmission = { ok: true } | { ok: false; reason: 'too_many_sockets' | 'too_many_seniors' };
export type StartAdmission = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Per-senior socket counts and start buckets, for every kiosk socket of this process. An entry goes
 * when its last socket has gone and its bucket is full again: closing and reopening sockets does not
 * reset a senior's start budget.
 */
export class SeniorLimits {
  private readonly seniors = new Map<string, SeniorState>();

  readonly settings: SeniorLimitSettings;
  private readonly now: () => number;
  private readonly maxTracked: number;

  constructor(
    settings: SeniorLimitSettings,
    now: () => number = () => performance.now(),
    maxTracked = MAX_TRACKED_SENIORS,
  ) {
    this.settings = settings;
    this.now = now;
    this.maxTracked = maxTracked;
    for (const [name, value] of Object.entries(settings)) {
      if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`senior limits: ${name} must be positive, got ${value}`);
    }
  }

  /** Seniors tracked now (with a socket, or a start bucket still refilling). */
  get size(): number {
    return this.seniors.size;
  }

  /** Sockets the senior holds now. */
  socketsOf(seniorId: string): number {
    return this.seniors.get(seniorId)?.sockets ?? 0;
  }

  /** Reserves a socket for the senior; release it with `closeSocket` exactly once. */
  openSocket(seniorId: string): SocketAdmission {
    let state = this.seniors.get(seniorId);
    if (!state) {
      if (this.seniors.size >= this.maxTracked) this.sweep();
      if (this.seniors.size >= this.maxTracked) return { ok: false, reason: 'too_many_seniors' };
      state = { sockets: 0, starts: this.bucket() };
      this.seniors.set(seniorId, state);
    }
    if (state.sockets >= this.settings.socketsPerSenior) return { ok: false, reason: 'too_many_sockets' };
    state.sockets += 1;
    return { ok: true };
  }

  closeSocket(seniorId: string): void {
    const state = this.seniors.get(seniorId);
    if (!state) return;
    state.sockets = Math.max(0, state.sockets - 1);
    if (state.sockets === 0 && state.starts.full) this.seniors.delete(seniorId);
  }

  /** One `session.start` of the senior's: admitted, or refused with the wait before the next one would be. */
  takeStart(seniorId: string): StartAdmission {
    const state = this.seniors.get(seniorId);
    // A start comes from an open socket, whose reservation holds the entry; without one, refuse nothing.
    if (!state || state.starts.take()) return { ok: true };
    return { ok: false, retryAfterMs: Math.max(1, state.starts.msUntil()) };
  }

  /** Forgets the seniors with no socket whose start bucket has refilled. */
  sweep(): void {
    for (const [seniorId, state] of this.seniors) if (state.sockets === 0 && state.starts.full) this.seniors.delete(seniorId);
  }

  private bucket(): TokenBucket {
    return new TokenBucket(this.settings.startsPerMinute / 60, this.settings.startsBurst, this.now);
  }
}

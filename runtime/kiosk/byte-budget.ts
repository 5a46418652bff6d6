/**
 * A token bucket over bytes: the microphone's own budget, separate from the text-frame rate limit
 * so typed-message limits never drop audio, and audio floods never starve text.
 */

/** Audio may arrive at 1.5× real time (network jitter catches up in bursts)… */
export const AUDIO_BUDGET_REAL_TIME_FACTOR = 1.5;
/** …with a burst of one second of that budget. */
export const AUDIO_BURST_SECONDS = 1;

export class ByteBudget {
  private tokens: number;
  private last: number;

  constructor(
    private readonly bytesPerSecond: number,
    private readonly burstBytes: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(bytesPerSecond > 0) || !Number.isFinite(bytesPerSecond)) throw new RangeError(`byte budget: bytesPerSecond must be positive, got ${bytesPerSecond}`);
    if (!(burstBytes > 0) || !Number.isFinite(burstBytes)) throw new RangeError(`byte budget: burstBytes must be positive, got ${burstBytes}`);
    this.tokens = burstBytes;
    this.last = now();
  }

  /** Spends `n` bytes if the budget allows them; otherwise spends nothing and returns false. */
  take(n: number): boolean {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`byte budget: cannot take ${n} bytes`);
    const at = this.now();
    // A clock that steps back refills nothing rather than draining the bucket.
    const elapsedMs = Math.max(0, at - this.last);
    this.last = Math.max(this.last, at);
    this.tokens = Math.min(this.burstBytes, this.tokens + (elapsedMs * this.bytesPerSecond) / 1000);
    if (n > this.tokens) return false;
    this.tokens -= n;
    return true;
  }
}

/** The budget for s16 mono microphone audio at `sampleRate`: 48,000 B/s with a 48,000 B burst at 16 kHz. */
export function audioByteBudget(sampleRate: number, now?: () => number): ByteBudget {
  const bytesPerSecond = sampleRate * 2 * AUDIO_BUDGET_REAL_TIME_FACTOR;
  return new ByteBudget(bytesPerSecond, bytesPerSecond * AUDIO_BURST_SECONDS, now);
}

/**
 * A token bucket: `capacity` tokens at once, refilled at `perSecond`. The gateway gives each socket
 * one for its text frames (a token a frame) and, in voice mode, one for its microphone audio (a token
 * a byte), so typed-message limits never drop audio and audio floods never starve text.
 *
 * It counts on the monotonic clock: on the wall clock, an NTP step back would leave the bucket empty
 * for as long as the step, and every kiosk's turns refused.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  private readonly perSecond: number;
  private readonly capacity: number;
  private readonly now: () => number;

  constructor(
    perSecond: number,
    capacity: number,
    now: () => number = () => performance.now(),
  ) {
    this.perSecond = perSecond;
    this.capacity = capacity;
    this.now = now;
    if (!(perSecond > 0) || !Number.isFinite(perSecond)) throw new RangeError(`token bucket: perSecond must be positive, got ${perSecond}`);
    if (!(capacity > 0) || !Number.isFinite(capacity)) throw new RangeError(`token bucket: capacity must be positive, got ${capacity}`);
    this.tokens = capacity;
    this.last = now();
  }

  /** Spends `n` tokens if the bucket holds them; otherwise spends nothing and returns false. */
  take(n = 1): boolean {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`token bucket: cannot take ${n} tokens`);
    this.refill();
    if (n > this.tokens) return false;
    this.tokens -= n;
    return true;
  }

  /** How long until `n` tokens are there (0: now); never more than a refill of the whole bucket. */
  msUntil(n = 1): number {
    this.refill();
    return n <= this.tokens ? 0 : Math.ceil(((Math.min(n, this.capacity) - this.tokens) * 1000) / this.perSecond);
  }

  /** Full again: forgetting this bucket and making a new one later would change nothing. */
  get full(): boolean {
    this.refill();
    return this.tokens >= this.capacity;
  }

  private refill(): void {
    const at = this.now();
    // Even an injected clock may step back: that refills nothing, and drains nothing.
    const elapsedMs = Math.max(0, at - this.last);
    this.last = Math.max(this.last, at);
    this.tokens = Math.min(this.capacity, this.tokens + (elapsedMs * this.perSecond) / 1000);
  }
}

/** Microphone audio may arrive at 1.5× real time (network jitter catches up in bursts)… */
export const AUDIO_BUDGET_REAL_TIME_FACTOR = 1.5;
/**
 * …with a burst of two seconds of that budget: three seconds of audio at once. A kiosk whose sending
 * stalls (a Wi-Fi hiccup, a busy device) catches up in one burst; one second of budget dropped the
 * speech of a stall over 1.5 s (Chromium's capture, at load 13).
 */
export const AUDIO_BURST_SECONDS = 2;

/** The byte budget for s16 mono microphone audio at `sampleRate`: 48,000 B/s with a 96,000 B burst at 16 kHz. */
export function audioByteBudget(sampleRate: number, now?: () => number): TokenBucket {
  const bytesPerSecond = sampleRate * 2 * AUDIO_BUDGET_REAL_TIME_FACTOR;
  return new TokenBucket(bytesPerSecond, bytesPerSecond * AUDIO_BURST_SECONDS, now);
}

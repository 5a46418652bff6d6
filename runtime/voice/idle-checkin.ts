/**
 * The idle check-in (IDLE_CHECKIN_MS, off by default): after a reply has finished playing, a senior
 * who says nothing for a while hears one gentle line, pre-synthesized, so a kiosk that went quiet
 * does not feel like one that stopped working. Never more than once per silence.
 */

/** What the senior hears: kind and short, no question to answer at once. Pre-synthesized with the session's lines. */
export const CHECKIN_LINE = 'Je suis toujours là. Prenez votre temps, je vous écoute.';

export interface IdleCheckinOptions {
  /** IDLE_CHECKIN_MS; 0 is off. */
  idleMs: number;
  /**
   * The silence has lasted `idleMs`: speak the line now, unless it is not the moment (the senior is
   * speaking, a reply plays, the microphone is muted, the kiosk is gone). True if it was spoken.
   */
  speak(): boolean;
}

/**
 * The check-in's one timer: armed when a reply ends, cancelled by anything that takes the floor, and
 * after it has spoken, not armed again until the senior has spoken (or typed) again — so the line's
 * own end does not start a second silence.
 */
export class IdleCheckin {
  private timer: NodeJS.Timeout | null = null;
  /** The senior has spoken since the last check-in (true at first). */
  private spokenSince = true;

  private readonly o: IdleCheckinOptions;

  constructor(o: IdleCheckinOptions) {
    this.o = o;
  }

  get armed(): boolean {
    return this.timer !== null;
  }

  /** A reply (or the check-in line itself) has finished playing: the silence starts now. */
  replyEnded(): void {
    this.cancel();
    if (!(this.o.idleMs > 0) || !this.spokenSince) return;
    this.timer = setTimeout(() => this.fire(), this.o.idleMs);
    // A silence never keeps the process alive.
    this.timer.unref?.();
  }

  /** The senior speaks or types: no check-in now, and the next silence may have one. */
  heard(): void {
    this.cancel();
    this.spokenSince = true;
  }

  /** Something else takes the floor (a reply starts, the microphone is muted), or the session ends. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private fire(): void {
    this.timer = null;
    if (this.o.speak()) this.spokenSince = false;
  }
}

/**
 * Microphone audio may stop arriving: a kiosk with a speech gate sends only around speech
 * (session.start `audio.kiosk.gate`, session.ready `audio.gaps`, docs/protocol.md#speech-gate); only
 * such a kiosk's gaps are filled, since another's gap is a network stall whose audio comes late. The listener counts the endpointing
 * silence in audio, so without audio it would wait mid-pause for ever; this fills such a gap with
 * silence on the wall clock, as if the microphone had gone on sending it, and the turn ends as it
 * would have. Each gap gets at most `maxFillMs` of silence (no pause inside an utterance lasts longer
 * than ENDPOINT_MAX_MS: more would tell the listener nothing) and a timer only while it lasts.
 */

/** Audio this late (after the end of the audio already heard) is a gap, not network jitter (a kiosk sends a frame every 10–60 ms). */
export const GAP_AFTER_MS = 200;
/** How often a gap's silence is handed over while it lasts. */
export const GAP_TICK_MS = 40;
/** The listener's PCM: 16 kHz. */
const SAMPLES_PER_MS = 16;

export interface AudioGapsOptions {
  maxFillMs: number;
  /** Silence for the listener (16 kHz s16), as if it had come from the microphone. */
  fill(pcm: Int16Array): void;
}

export class AudioGaps {
  /** Where the audio heard so far ends on the wall clock: a burst sent faster than real time ends later than now. */
  private audioEnd = 0;
  /** Silence already filled into the current gap (ms). */
  private filledMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly options: AudioGapsOptions;

  constructor(options: AudioGapsOptions) {
    this.options = options;
  }

  /** `samples` of microphone audio (16 kHz) arrived: any gap is over. One timer at most, re-armed from itself, not per frame. */
  heard(samples: number): void {
    const now = Date.now();
    this.audioEnd = Math.max(this.audioEnd, now) + samples / SAMPLES_PER_MS;
    this.filledMs = 0;
    if (!this.timer) this.arm(this.audioEnd - now + GAP_AFTER_MS);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.tick, ms);
    this.timer.unref();
  }

  private readonly tick = (): void => {
    this.timer = null;
    // The gap starts where the audio heard ends, not when it arrived.
    const gapMs = Math.floor(Date.now() - this.audioEnd);
    if (gapMs < GAP_AFTER_MS) return this.arm(GAP_AFTER_MS - gapMs);
    const ms = Math.min(gapMs, this.options.maxFillMs) - this.filledMs;
    if (ms > 0) {
      this.filledMs += ms;
      this.options.fill(new Int16Array(ms * SAMPLES_PER_MS));
    }
    if (this.filledMs < this.options.maxFillMs) this.arm(GAP_TICK_MS);
  };
}

/**
 * Where the audio of an utterance went quiet, by its level: the end of the last 8 ms sub-frame
 * within AUDIBLE_RANGE_DB of the utterance's loudest one. Silero says *whether* speech has ended
 * (robust to noise) but hears the end a window or two late; the level says *when* it ended,
 * to the sub-frame. Background noise above that range simply keeps the audio "loud": no credit.
 */
export const SUB_FRAME_SAMPLES = 128;
/** A sub-frame this far below the utterance's loudest is quiet (espeak's word endings sit at −27 to −36 dB). */
const AUDIBLE_RANGE_DB = 40;
const AUDIBLE_RATIO = 10 ** (-AUDIBLE_RANGE_DB / 10);

/** The "recent" level is that of the last this many loud sub-frames (160 ms of speech). */
const RECENT_SUB_FRAMES = 20;

export class AudibleEnd {
  /** The loudest sub-frame's mean square since `forget()`. */
  private peak = 0;
  /** Absolute sample where the last loud sub-frame ended. */
  private lastLoudEnd = 0;
  /** Loud sub-frames' energy since `forget()` (sum and count), and the last few in a ring: the level's contour. */
  private loudSum = 0;
  private loudCount = 0;
  private readonly recent = new Float64Array(RECENT_SUB_FRAMES);
  private recentSum = 0;

  /** Reads one analysis window starting at absolute sample `start`. */
  observe(window: Int16Array, start: number): void {
    for (let from = 0; from + SUB_FRAME_SAMPLES <= window.length; from += SUB_FRAME_SAMPLES) {
      const energy = meanSquare(window, from);
      if (energy > this.peak) this.peak = energy;
      if (energy > 0 && energy >= this.peak * AUDIBLE_RATIO) {
        this.lastLoudEnd = start + from + SUB_FRAME_SAMPLES;
        const slot = this.loudCount % RECENT_SUB_FRAMES;
        this.recentSum += energy - this.recent[slot]!;
        this.recent[slot] = energy;
        this.loudSum += energy;
        this.loudCount++;
      }
    }
  }

  /**
   * The level of the speech's last 160 ms against the utterance's average, in dB (negative: it fell
   * at the end, as a French statement does); null before there is enough speech to tell.
   */
  levelDb(): number | null {
    if (this.loudCount < 2 * RECENT_SUB_FRAMES || this.loudSum <= 0 || this.recentSum <= 0) return null;
    return 10 * Math.log10(this.recentSum / RECENT_SUB_FRAMES / (this.loudSum / this.loudCount));
  }

  /** Whether the sub-frame of audio at `from` is quiet against the utterance so far (nothing is recorded). */
  isQuiet(audio: Int16Array, from: number): boolean {
    const energy = meanSquare(audio, from);
    return energy === 0 || energy < this.peak * AUDIBLE_RATIO;
  }

  /** Samples of quiet audio before absolute sample `at`. */
  quietSamples(at: number): number {
    return Math.max(0, at - this.lastLoudEnd);
  }

  /** A new utterance measures its loudness afresh (called while nothing is under way). */
  forget(): void {
    this.peak = 0;
    // Called on every quiet window: nothing to clear most of the time.
    if (this.loudCount !== 0) this.recent.fill(0);
    this.loudSum = 0;
    this.loudCount = 0;
    this.recentSum = 0;
  }

  reset(): void {
    this.forget();
    this.lastLoudEnd = 0;
  }
}

function meanSquare(audio: Int16Array, from: number): number {
  let energy = 0;
  for (let i = from; i < from + SUB_FRAME_SAMPLES; i++) energy += audio[i]! * audio[i]!;
  return energy / SUB_FRAME_SAMPLES;
}

/**
 * The client-side speech gate: which 20 ms microphone frames are worth sending. An energy gate over a
 * tracked noise floor (the microphone's own processing, echo cancellation and noise suppression, has
 * already removed most of what is not the senior): it opens after a short onset of frames clearly above
 * the floor, sends the pre-roll it kept (so the first syllable reaches the runtime's detectors and the
 * recognizer), and closes only after a hang-over below it (a soft word ending is not cut). Used only
 * once the runtime says it accepts gaps (session.ready `audio.gaps`, docs/protocol.md#speech-gate).
 * Allocates nothing per frame but what it hands back.
 */

export interface SpeechGateOptions {
  /** Audio kept and sent ahead of the speech when the gate opens (ms). */
  preRollMs?: number;
  /** Audio still sent after the level falls (ms). */
  hangOverMs?: number;
  /** Frames above the threshold in a row before the gate opens (ms). */
  onsetMs?: number;
  /** How far above the noise floor speech is (dB). */
  marginDb?: number;
  /** Nothing quieter than this is speech, whatever the floor (dBFS). */
  minLevelDb?: number;
}

export const SPEECH_GATE_DEFAULTS: Required<SpeechGateOptions> = { preRollMs: 300, hangOverMs: 400, onsetMs: 40, marginDb: 12, minLevelDb: -50 };

/** The floor follows a quieter room at once and a louder one slowly (dB a frame: 2.5 dB/s at 20 ms), so speech never becomes the floor. */
const FLOOR_RISE_DB = 0.05;
/** Below the quietest a 16-bit frame can be: digital silence. */
const SILENCE_DB = -96;
/** Once open, the gate holds while the level stays this much above the floor (hysteresis). */
const HOLD_MARGIN_RATIO = 0.5;

/** RMS level of a 16-bit frame, dBFS. */
export function levelDb(frame: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
  const rms = Math.sqrt(sum / Math.max(1, frame.length)) / 32768;
  return rms > 0 ? Math.max(SILENCE_DB, 20 * Math.log10(rms)) : SILENCE_DB;
}

export class SpeechGate {
  private readonly settings: Required<SpeechGateOptions>;
  private readonly frameMs: number;
  /** The pre-roll's ring of the latest frames (oldest first once full). */
  private readonly ring: Int16Array[] = [];
  /** Unknown until the first frame (usually the room before anyone speaks). */
  private floorDb: number | null = null;
  private above = 0;
  private quietMs = 0;
  private isOpen = false;

  constructor(frameMs: number, options: SpeechGateOptions = {}) {
    this.frameMs = frameMs;
    this.settings = { ...SPEECH_GATE_DEFAULTS, ...options };
  }

  get open(): boolean {
    return this.isOpen;
  }

  /** One frame in; the frames to send now, in order (the pre-roll and this one as the gate opens; none while closed). */
  push(frame: Int16Array): Int16Array[] {
    const s = this.settings;
    const level = levelDb(frame);
    const floor = (this.floorDb ??= level);
    // A constant noise loud enough to open the gate becomes the floor too (slowly), and closes it.
    this.floorDb = level < floor ? level : Math.min(level, floor + FLOOR_RISE_DB);
    if (this.isOpen) {
      const holds = level >= Math.max(floor + s.marginDb * HOLD_MARGIN_RATIO, s.minLevelDb);
      this.quietMs = holds ? 0 : this.quietMs + this.frameMs;
      if (this.quietMs <= s.hangOverMs) return [frame];
      this.isOpen = false;
      this.above = 0;
      this.keep(frame);
      return [];
    }
    this.above = level >= Math.max(floor + s.marginDb, s.minLevelDb) ? this.above + this.frameMs : 0;
    if (this.above < s.onsetMs) {
      this.keep(frame);
      return [];
    }
    this.isOpen = true;
    this.quietMs = 0;
    const out = this.ring.splice(0);
    out.push(frame);
    return out;
  }

  /** Forget the pre-roll (the microphone was muted, or the session changed). */
  reset(): void {
    this.ring.length = 0;
    this.isOpen = false;
    this.above = 0;
    this.quietMs = 0;
  }

  private keep(frame: Int16Array): void {
    this.ring.push(frame);
    if (this.ring.length * this.frameMs > this.settings.preRollMs) this.ring.shift();
  }
}

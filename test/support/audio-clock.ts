/**
 * FakeVoxtral's clock for scripts written over known audio (`FakeVoxtral.clock`): it finds each chunk the
 * recognizer receives in that audio — the runtime hands the microphone's samples on unchanged, cut where
 * its listener pleases and led by silence of its own after an early flush — and says where the chunk ends,
 * in ms of that audio. A recognizer hears where the speech is; a fake that assumed where the runtime's
 * pre-roll began would misplace every word by the listener's detection lag.
 */
export class AudioClock {
  private audio: Int16Array = new Int16Array(0);
  /** The sample where the next chunk should start (-1: not yet placed). */
  private next = -1;
  private readonly rate: number;

  constructor(rate: number) {
    this.rate = rate;
  }

  /** The audio the next chunks come from (a new utterance). */
  set(audio: Int16Array): void {
    this.audio = audio;
    this.next = -1;
  }

  /** Where `chunk` ends in the audio (ms), or undefined if it cannot be found there (silence only, or foreign). */
  heard(chunk: Int16Array): number | undefined {
    const end = this.next >= 0 && this.matches(chunk, 0, chunk.length, this.next) ? this.next + chunk.length : this.find(chunk);
    if (end === undefined) return undefined;
    this.next = end;
    return (end * 1000) / this.rate;
  }

  /** Whether `chunk` is found in the audio (silence alone is not), without moving the clock: whose audio it is. */
  holds(chunk: Int16Array): boolean {
    return this.find(chunk) !== undefined;
  }

  /** By the chunk's last PROBE samples, which the runtime's own silence never holds unless they are all zero. */
  private find(chunk: Int16Array): number | undefined {
    const length = Math.min(PROBE, chunk.length);
    const from = chunk.length - length;
    let silent = true;
    for (let i = from; i < chunk.length && silent; i++) silent = chunk[i] === 0;
    if (silent) return undefined;
    // Later audio first: the utterance goes forward.
    for (const start of this.next > 0 ? [this.next, 0] : [0]) {
      for (let at = start; at + length <= this.audio.length; at++) {
        if (this.matches(chunk, from, length, at)) return at + length;
      }
    }
    return undefined;
  }

  private matches(chunk: Int16Array, from: number, length: number, at: number): boolean {
    if (at + length > this.audio.length) return false;
    for (let i = 0; i < length; i++) if (this.audio[at + i] !== chunk[from + i]) return false;
    return true;
  }
}

/** 10 ms at 16 kHz: room noise is never the same for that long in two places. */
const PROBE = 160;

import { INPUT_SAMPLE_RATE } from '../../machines/voice/voice.port.ts';

/**
 * The early flush (STT_EARLY_FLUSH_MS): a short way into a pause, the recognizer is asked for its
 * final text of everything said so far, instead of waiting for the end of turn to ask. Its words
 * come about half a second behind the audio and it holds a sentence's last word until flushed, so
 * without this the end-of-turn decision reads an ending that is not there yet. The stream stays open
 * (Voxtral's flush is not terminal): if the senior goes on, the rest is the utterance's next segment
 * and the turn's transcript is the segments joined.
 *
 * After a flush the pause's audio is held back from the recognizer: it is silence unless the senior
 * goes on, and then only its last `PRE_ROLL_MS` (led by silence if the pause was shorter) goes ahead of
 * the new speech — the recognizer hears the next segment as it hears a new utterance, with the same
 * pre-roll before it.
 *
 * The recheck (STT_RECHECK_MS): a text the recognizer did not close is asked for once more later in
 * the same pause, with the pause's audio since the flush. The detector hears the end of speech by
 * probability, and a soft word ending it does not count as speech (a final « r », a breath-borne
 * syllable) may lie just past the flush: held back, it would never be transcribed, and the decision
 * would wait the long no-cue time on a sentence that was finished. Until the recheck, the whole pause
 * since the flush is kept (bounded by `recheckHoldMs`, the longest a pause lasts): a recognizer slow to
 * answer the first flush delays the recheck, and the audio right after the flush must still be there.
 */
export class EarlyFlush {
  /** A flush failed: the utterance cannot be transcribed whole. */
  failure: unknown = undefined;
  /** Final texts of the segments flushed so far, in order (never stored, never logged). */
  private readonly segments: string[] = [];
  /** The pause's audio since the flush, held back (null: the audio goes to the recognizer). */
  private tail: Int16Array[] | null = null;
  private tailSamples = 0;
  /** The pause's first flush: its recheck may still come, so the pause's audio is kept until then. */
  private first = false;
  private readonly keepSamples: number;
  private readonly recheckSamples: number;

  /** `recheckHoldMs`: the pause audio kept while a recheck may still come (default: the pre-roll only, no recheck). */
  constructor(preRollMs: number, recheckHoldMs = preRollMs) {
    this.keepSamples = samplesOf(preRollMs);
    this.recheckSamples = Math.max(this.keepSamples, samplesOf(recheckHoldMs));
  }

  /** The pause's audio is being held back: nothing was said since the flush. */
  get holding(): boolean {
    return this.tail !== null;
  }

  /** The utterance's text: the flushed segments, then the current segment's interim (or final) text. */
  text(current: string): string {
    const rest = current.trim();
    return [...this.segments, ...(rest === '' ? [] : [rest])].join(' ');
  }

  /** A flush is under way: from now on the pause's audio is held back. `first`: the pause's first flush. */
  begin(first: boolean): void {
    this.first = first;
    this.tail = [];
    this.tailSamples = 0;
  }

  settled(text: string): void {
    const segment = text.trim();
    if (segment !== '') this.segments.push(segment);
  }

  failed(err: unknown): void {
    this.failure = err;
  }

  /**
   * Keeps the pause's audio, bounded (with the chunk that reaches past the bound) to the last
   * `keepSamples` — or, after the pause's first flush, whose recheck may still come, to `recheckSamples`.
   */
  hold(pcm: Int16Array): void {
    const tail = this.tail!;
    tail.push(pcm);
    this.tailSamples += pcm.length;
    const bound = this.first ? this.recheckSamples : this.keepSamples;
    while (tail.length > 1 && this.tailSamples - tail[0]!.length >= bound) this.tailSamples -= tail.shift()!.length;
  }

  /** The recheck: every sample held since the flush, in order, for the recognizer to hear as it was. */
  releaseAll(): Int16Array[] {
    const tail = this.tail ?? [];
    this.tail = null;
    this.tailSamples = 0;
    return tail;
  }

  /**
   * The senior goes on: exactly `keepSamples` to go ahead of the new speech — the held audio's last, led
   * by silence when the pause was shorter — so the next segment starts as every utterance does, its
   * speech the pre-roll into it. Nothing is held after.
   */
  release(): Int16Array[] {
    const tail = this.tail ?? [];
    this.tail = null;
    let extra = this.tailSamples - this.keepSamples;
    if (extra < 0) tail.unshift(new Int16Array(-extra));
    // More than the pre-roll may be held while a recheck could come: whole chunks go first.
    while (extra > 0 && tail.length > 0) {
      const first = tail[0]!;
      if (first.length <= extra) tail.shift();
      else tail[0] = first.subarray(extra);
      extra -= Math.min(first.length, extra);
    }
    this.tailSamples = 0;
    return tail;
  }
}

const samplesOf = (ms: number): number => Math.round((ms * INPUT_SAMPLE_RATE) / 1000);

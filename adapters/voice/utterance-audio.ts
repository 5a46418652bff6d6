import { INPUT_SAMPLE_RATE } from '../../machines/voice/voice.port.ts';

/** Audio kept for replay after a drop: the longest utterance the listener lets through (30 s at 16 kHz). */
const MAX_BUFFERED_SAMPLES = 30 * INPUT_SAMPLE_RATE;
/**
 * Microphone audio leaves in appends of 100 ms, not one per analysis window (32 ms): each append is a
 * base64 string, a JSON message, a masked WebSocket frame and a socket write, and those were the
 * largest cost of the audio path after the detector. A flush sends what is batched first, so the end
 * of speech waits for nothing; interim text may come up to 100 ms later.
 */
const APPEND_BATCH_SAMPLES = INPUT_SAMPLE_RATE / 10;

/**
 * The audio a transcription stream holds since its last flush: batched into 100 ms chunks as it is
 * appended, and kept (bounded) until the flush takes it, so a socket lost mid-utterance can be replayed.
 */
export class UtteranceAudio {
  /** Audio sealed into chunks since the last flush, sent (or to be sent on the next socket). */
  private sealed: Int16Array[] = [];
  private samples = 0;
  /** Audio appended and not yet sealed: it becomes one chunk when full or at the flush. */
  private batch = new Int16Array(APPEND_BATCH_SAMPLES);
  private batchLength = 0;

  /** `full`: a batch is whole, to be sealed and sent. */
  private readonly full: () => void;

  constructor(full: () => void) {
    this.full = full;
  }

  /** The chunks since the last flush, in order. */
  get chunks(): readonly Int16Array[] {
    return this.sealed;
  }

  /** Copied into the batch: the caller may reuse its array. */
  append(pcm: Int16Array): void {
    for (let at = 0; at < pcm.length; ) {
      const n = Math.min(pcm.length - at, APPEND_BATCH_SAMPLES - this.batchLength);
      this.batch.set(pcm.subarray(at, at + n), this.batchLength);
      this.batchLength += n;
      at += n;
      if (this.batchLength === APPEND_BATCH_SAMPLES) this.full();
    }
  }

  /** The batch as the utterance's next chunk (null when nothing is batched). */
  seal(): Int16Array | null {
    if (this.batchLength === 0) return null;
    const chunk = this.batch.subarray(0, this.batchLength);
    this.batch = new Int16Array(APPEND_BATCH_SAMPLES);
    this.batchLength = 0;
    this.sealed.push(chunk);
    this.samples += chunk.length;
    // Bounded: past the longest utterance, the oldest audio goes (the listener cuts utterances there anyway).
    while (this.samples > MAX_BUFFERED_SAMPLES) this.samples -= this.sealed.shift()!.length;
    return chunk;
  }

  /** The flush: the chunks since the last one, handed over. */
  take(): Int16Array[] {
    const chunks = this.sealed;
    this.sealed = [];
    this.samples = 0;
    return chunks;
  }

  clear(): void {
    this.take();
    this.batchLength = 0;
  }
}

import type { SpeakerPort } from '../../machines/voice/voice.port.ts';
import { Resampler } from '../../machines/voice/resample.ts';

export class NoSpeechError extends Error {
  override name = 'NoSpeechError';
}

export interface FallbackSpeakerOptions {
  /** Mistral's speech service. */
  primary: SpeakerPort;
  /** espeak-ng, offline: speaks the sentence when the primary fails before any audio. */
  fallback: SpeakerPort;
  /** Bound on the primary's first audio; past it, the sentence goes to the fallback. Default 1,500 ms. */
  firstAudioMs?: number;
  /** Each failure of the primary (for `kohami_speech_errors_total`); never given the text. */
  onSpeechError?: (error: Error) => void;
}

/**
 * The primary speaker first; if it fails (or stays silent past `firstAudioMs`) before yielding any
 * audio, the same sentence from the fallback, resampled to the primary's rate so the kiosk's
 * stream keeps one format. A failure after audio has started is not papered over: replaying the
 * sentence in another voice would repeat words the senior already heard.
 */
export class FallbackSpeaker implements SpeakerPort {
  readonly sampleRate: number;
  readonly voiceId: string;
  private readonly firstAudioMs: number;

  constructor(private readonly options: FallbackSpeakerOptions) {
    this.sampleRate = options.primary.sampleRate;
    this.voiceId = `${options.primary.voiceId}|${options.fallback.voiceId}`;
    this.firstAudioMs = options.firstAudioMs ?? 1_500;
  }

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    if (signal.aborted) return;
    const primary = new AbortController();
    const stop = () => primary.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    const silent = setTimeout(() => primary.abort(new NoSpeechError(`no speech audio within ${this.firstAudioMs} ms`)), this.firstAudioMs);
    let heard = false;
    let failure: Error | undefined;
    try {
      for await (const chunk of this.options.primary.synthesize(text, primary.signal)) {
        if (!heard) clearTimeout(silent);
        heard = true;
        yield chunk;
      }
      if (heard || signal.aborted || text.trim() === '') return;
      failure = primary.signal.aborted ? (primary.signal.reason as Error) : new NoSpeechError('the speech service returned no audio');
    } catch (err) {
      if (signal.aborted) return;
      failure = err as Error;
      if (heard) {
        this.options.onSpeechError?.(failure);
        throw err;
      }
    } finally {
      clearTimeout(silent);
      signal.removeEventListener('abort', stop);
    }
    this.options.onSpeechError?.(failure);
    const resampler = new Resampler(this.options.fallback.sampleRate, this.sampleRate);
    for await (const chunk of this.options.fallback.synthesize(text, signal)) yield resampler.push(chunk);
  }
}

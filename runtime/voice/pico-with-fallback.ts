import { EspeakSpeaker } from '../../adapters/voice/espeak-speaker.ts';
import { PicoLoadError, type PicoSpeaker } from '../../adapters/voice/pico-speaker.ts';
import { Resampler } from '../../machines/voice/resample.ts';
import type { SpeakerPort } from '../../machines/voice/voice.port.ts';

/**
 * OFFLINE_VOICE=auto with Pico's lingware present: SVOX Pico until it fails to load (files that are
 * there but corrupt or unreadable, a module that will not start), then espeak-ng for the rest of the
 * process — the sentence that found out included — rather than every offline sentence failing. Its
 * audio is resampled to Pico's rate, so the stream keeps the format it announced. A sentence Pico
 * fails once loaded fails as before (the caller's fallbacks handle that).
 */
export class PicoWithFallback implements SpeakerPort {
  readonly sampleRate: number;
  private readonly pico: PicoSpeaker;
  private readonly onFallback: (error: Error) => void;
  private espeak: EspeakSpeaker | undefined;

  constructor(pico: PicoSpeaker, onFallback: (error: Error) => void) {
    this.pico = pico;
    this.sampleRate = pico.sampleRate;
    this.onFallback = onFallback;
  }

  /** Pico's voice, or espeak-ng's once Pico failed to load: a line rendered by one is never kept as the other's. */
  get voiceId(): string {
    return this.espeak?.voiceId ?? this.pico.voiceId;
  }

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    if (!this.espeak) {
      try {
        return yield* this.pico.synthesize(text, signal);
      } catch (err) {
        if (!(err instanceof PicoLoadError)) throw err;
        this.espeak ??= new EspeakSpeaker();
        this.onFallback(err);
      }
    }
    const resampler = new Resampler(this.espeak.sampleRate, this.sampleRate);
    for await (const chunk of this.espeak.synthesize(text, signal)) yield resampler.push(chunk);
    if (!signal.aborted) yield resampler.flush();
  }
}

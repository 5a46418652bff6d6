import type { SpeakerPort, SpeechPiece } from '../../machines/voice/voice.port.ts';
import { Resampler } from '../../machines/voice/resample.ts';

export class NoSpeechError extends Error {
  override name = 'NoSpeechError';
}

export interface FallbackSpeakerOptions {
  /** Mistral's speech service. */
  primary: SpeakerPort;
  /** The offline voice (SVOX Pico or espeak-ng, offline-speaker.ts): speaks the sentence when the primary fails before any audio, and the rest of one it cut. */
  fallback: SpeakerPort;
  /**
   * Bound on the primary's silence: its first audio, then each next chunk once the consumer asks for
   * it (a consumer's own pause, a slow kiosk, does not count). Past it, what is left of the sentence
   * goes to the fallback. Default FIRST_AUDIO_MS (MistralSpeaker's own `stallMs`, 3 s, stays the outer bound).
   */
  firstAudioMs?: number;
  /** Each failure of the primary (for `kohami_speech_errors_total`); never given the text. */
  onSpeechError?: (error: Error) => void;
}

/** The primary's first audio later than this, and the fallback speaks the sentence. */
export const FIRST_AUDIO_MS = 1_500;

/**
 * Milliseconds of speech per character of French text, until the primary has finished a sentence to
 * measure its own pace on: a slow, clear voice (Voxtral's French voices say about 14 characters a
 * second). Erring slow makes the estimate of what was heard fall short, hence a word said twice, not one missed.
 */
export const PRIOR_MS_PER_CHAR = 70;
/** The estimate of what was heard is lowered by this share: a pace is never exact, and a word missed is worse than a word said twice. */
const HEARD_MARGIN = 0.1;
/** A sentence this short (in characters) teaches nothing reliable about the pace (a pause dominates it). */
const MIN_PACE_CHARS = 20;

/**
 * What the senior has not heard of `text` after `playedSamples` of its speech at `samplesPerChar`:
 * from the start of the word in progress at the (lowered) estimate on. The whole sentence when the
 * estimate falls inside the first word; its last word when the estimate reaches past its end (the
 * stream failed before it was done, so its end may be missing).
 */
export function unheardRest(text: string, playedSamples: number, samplesPerChar: number): string {
  const heardChars = Math.floor((playedSamples / samplesPerChar) * (1 - HEARD_MARGIN));
  const starts: number[] = [];
  for (let i = 0; i < text.length; i++) if (!/\s/.test(text[i]!) && (i === 0 || /\s/.test(text[i - 1]!))) starts.push(i);
  let from = 0;
  for (const start of starts) if (start <= heardChars) from = start;
  return text.slice(from).trim();
}

/**
 * The primary speaker first; if it fails (or stays silent past `firstAudioMs`) before yielding any
 * audio, the same sentence from the fallback. If it fails or stalls once audio has started, the
 * fallback speaks the rest of the sentence, from the word in progress (see `unheardRest`): the
 * senior hears the end of what the caption shows, in the offline voice, rather than silence. The
 * fallback's audio is resampled to the primary's rate so the kiosk's stream keeps one format.
 */
export class FallbackSpeaker implements SpeakerPort {
  readonly sampleRate: number;
  readonly voiceId: string;
  private readonly firstAudioMs: number;
  /** The primary's pace, measured on the sentences it finished (samples per character at its rate). */
  private samplesPerChar: number;
  private paceMeasured = false;

  private readonly options: FallbackSpeakerOptions;

  constructor(options: FallbackSpeakerOptions) {
    this.options = options;
    this.sampleRate = options.primary.sampleRate;
    this.voiceId = `${options.primary.voiceId}|${options.fallback.voiceId}`;
    this.firstAudioMs = options.firstAudioMs ?? FIRST_AUDIO_MS;
    this.samplesPerChar = (PRIOR_MS_PER_CHAR * this.sampleRate) / 1000;
    const opus = options.primary.synthesizeOpus?.bind(options.primary);
    if (opus) {
      const samplesOf = (piece: SpeechPiece) => (piece instanceof Int16Array ? piece.length : Math.round((piece.durationMs * this.sampleRate) / 1000));
      this.synthesizeOpus = (text, signal) => this.speak(text, signal, (s) => opus(text, s), samplesOf);
    }
  }

  synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
    return this.speak(text, signal, (s) => this.options.primary.synthesize(text, s), (chunk) => chunk.length);
  }

  /** Present when the primary has it: its Opus packets, and the fallback's PCM (at the primary's rate) when it fails. */
  readonly synthesizeOpus?: (text: string, signal: AbortSignal) => AsyncIterable<SpeechPiece>;

  /**
   * The primary's stream of `T` until it fails, then the fallback's PCM for the rest; `samples` says
   * how much of the sentence (in samples at the primary's rate) a piece carried.
   */
  private async *speak<T>(text: string, signal: AbortSignal, primaryStream: (signal: AbortSignal) => AsyncIterable<T>, samples: (piece: T) => number): AsyncIterable<T | Int16Array> {
    if (signal.aborted) return;
    const primary = new AbortController();
    const stop = () => primary.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    const silent = () => setTimeout(() => primary.abort(new NoSpeechError(`no speech audio for ${this.firstAudioMs} ms`)), this.firstAudioMs);
    let timer = silent();
    let played = 0;
    let failure: Error | undefined;
    try {
      for await (const chunk of primaryStream(primary.signal)) {
        clearTimeout(timer);
        played += samples(chunk);
        yield chunk;
        // The consumer asks for more: from now on the primary's silence counts again.
        timer = silent();
      }
      if (signal.aborted || text.trim() === '') return;
      if (!primary.signal.aborted && played > 0) return this.learnPace(text, played);
      failure = primary.signal.aborted ? (primary.signal.reason as Error) : new NoSpeechError('the speech service returned no audio');
    } catch (err) {
      if (signal.aborted) return;
      failure = err as Error;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
    this.options.onSpeechError?.(failure);
    const rest = played === 0 ? text : unheardRest(text, played, this.samplesPerChar);
    if (rest === '') return;
    const resampler = new Resampler(this.options.fallback.sampleRate, this.sampleRate);
    for await (const chunk of this.options.fallback.synthesize(rest, signal)) yield resampler.push(chunk);
    if (!signal.aborted) yield resampler.flush();
  }

  /** A sentence the primary finished: its pace, averaged with the ones before (one voice per speaker). */
  private learnPace(text: string, samples: number): void {
    const chars = text.trim().length;
    if (chars < MIN_PACE_CHARS) return;
    const pace = samples / chars;
    this.samplesPerChar = this.paceMeasured ? 0.7 * this.samplesPerChar + 0.3 * pace : pace;
    this.paceMeasured = true;
  }
}

/**
 * Endpointing: when an utterance starts and ends, decided from a stream of per-window speech
 * decisions. Pure: the listener feeds it one decision per analysis window and acts on the events.
 *
 * Tuned for seniors, who pause mid-sentence to find a word: an utterance ends only after the
 * silence the end-of-turn decision asked for (`end-of-turn.ts`: short after a finished sentence, long
 * after an unfinished one; `endpointSilenceMs`, 700 ms, until it has spoken), a
 * burst shorter than `minSpeechMs` (a cough, a chair) never starts one, and the neural
 * detector's probability is read with hysteresis: a window in the band between the two thresholds
 * (`weak`) continues an onset or an utterance and counts as speech heard, but only a confident
 * window (`speech`) holds the endpoint off. The silence is therefore counted from the end of the
 * last confident window: Silero's probability decays through the band for a window or two after
 * the audible end, and that decay is part of the senior's wait, not of their speech; where the
 * audio's level shows it went quiet earlier still, the silence runs from there (bounded by
 * AUDIBLE_END_CREDIT_MS). Speech that comes back confidently resets the silence, so a mid-sentence
 * pause still never ends the utterance: the silence counted never exceeds the quiet actually heard.
 */

export interface EndpointingConfig {
  /** Continuous speech needed before an utterance is confirmed. */
  minSpeechMs: number;
  /** Continuous silence that ends an utterance when no end-of-turn decision says otherwise. */
  endpointSilenceMs: number;
  /** An utterance is cut here even if the senior is still speaking. */
  maxUtteranceMs: number;
}

/** Probability at or above which a window starts speech. */
export const SPEECH_START_THRESHOLD = 0.5;
/** Probability at or above which a window continues speech already under way (hysteresis, as Silero's own). */
export const SPEECH_CONTINUE_THRESHOLD = 0.35;

/**
 * One analysis window as endpointing reads it: `speech` at or above the start threshold, `weak`
 * in the hysteresis band (only while an onset or an utterance is under way), `silence` below.
 */
export type WindowDecision = 'speech' | 'weak' | 'silence';

export type EndpointingState =
  | { readonly phase: 'quiet' }
  /** Speech heard but shorter than `minSpeechMs`: not yet an utterance. */
  | { readonly phase: 'onset'; readonly speechMs: number }
  | { readonly phase: 'speech'; readonly speechMs: number; readonly silenceMs: number; readonly utteranceMs: number };

export type EndpointingEvent =
  /** `onsetMs`: how much audio before this window's end belongs to the utterance already. */
  | { readonly type: 'started'; readonly onsetMs: number }
  | { readonly type: 'stopped'; readonly reason: 'silence' | 'max_length' };

export interface EndpointingStep {
  readonly state: EndpointingState;
  readonly event?: EndpointingEvent;
}

/**
 * Silero stays confident for a window or two after the audible end of speech (its recurrent state,
 * 32 ms windows). Once it is no longer confident, the silence runs from where the audio itself went
 * quiet if that came earlier — by at most this much: a level can say when speech ended, only the
 * detector whether it did.
 */
export const AUDIBLE_END_CREDIT_MS = 96;

export const QUIET: EndpointingState = { phase: 'quiet' };
/** The step of most windows (silence while quiet), shared: the audio path allocates nothing for it. */
const STAY_QUIET: EndpointingStep = { state: QUIET };

export function validateEndpointingConfig(config: EndpointingConfig): void {
  for (const name of ['minSpeechMs', 'endpointSilenceMs', 'maxUtteranceMs'] as const) {
    const value = config[name];
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`endpointing: ${name} must be a positive number of ms, got ${value}`);
  }
  if (config.minSpeechMs >= config.maxUtteranceMs) {
    throw new RangeError(`endpointing: minSpeechMs (${config.minSpeechMs}) must be below maxUtteranceMs (${config.maxUtteranceMs})`);
  }
}

/**
 * The silence an utterance has waited: from the end of the last confident window, or from where the
 * audio went quiet by its level if that was earlier once the detector has let go (by at most
 * AUDIBLE_END_CREDIT_MS). 0 while confident speech goes on.
 */
export function waitedFor(silenceMs: number, quietMs: number): number {
  return silenceMs === 0 ? 0 : Math.max(silenceMs, Math.min(quietMs, silenceMs + AUDIBLE_END_CREDIT_MS));
}

/** Reads one window's speech probability: hysteresis, the band counting only once something is under way. */
export function decideWindow(probability: number, state: EndpointingState): WindowDecision {
  if (probability >= SPEECH_START_THRESHOLD) return 'speech';
  return state.phase !== 'quiet' && probability >= SPEECH_CONTINUE_THRESHOLD ? 'weak' : 'silence';
}

/**
 * Advances endpointing by one window of `ms` milliseconds. `quietMs`: how long the audio has been
 * quiet by its level at this window's end (0 when unknown or loud). `endpointMs`: the silence that
 * ends this utterance now (the end-of-turn decision's, `endpointSilenceMs` when none was made).
 */
export function advanceEndpointing(
  state: EndpointingState,
  decision: WindowDecision,
  ms: number,
  config: EndpointingConfig,
  quietMs = 0,
  endpointMs = config.endpointSilenceMs,
): EndpointingStep {
  const heard = decision !== 'silence';
  switch (state.phase) {
    case 'quiet':
    case 'onset': {
      if (!heard) return STAY_QUIET;
      const speechMs = (state.phase === 'onset' ? state.speechMs : 0) + ms;
      if (speechMs < config.minSpeechMs) return { state: { phase: 'onset', speechMs } };
      return {
        state: { phase: 'speech', speechMs, silenceMs: 0, utteranceMs: speechMs },
        event: { type: 'started', onsetMs: speechMs },
      };
    }
    case 'speech': {
      const utteranceMs = state.utteranceMs + ms;
      // A weak window counts toward the silence (the detector's decay after the last word) unless confident speech follows.
      const silenceMs = decision === 'speech' ? 0 : state.silenceMs + ms;
      // Once the detector has let go, the wait runs from where the audio went quiet if that was earlier (bounded by its lag).
      if (waitedFor(silenceMs, quietMs) >= endpointMs) return { state: QUIET, event: { type: 'stopped', reason: 'silence' } };
      if (utteranceMs >= config.maxUtteranceMs) return { state: QUIET, event: { type: 'stopped', reason: 'max_length' } };
      return { state: { phase: 'speech', speechMs: state.speechMs + (heard ? ms : 0), silenceMs, utteranceMs } };
    }
  }
}

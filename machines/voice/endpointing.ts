/**
 * Endpointing: when an utterance starts and ends, decided from a stream of per-window speech
 * decisions. Pure: the listener feeds it one decision per analysis window and acts on the events.
 *
 * Tuned for seniors, who pause mid-sentence to find a word: an utterance ends only after
 * `endpointSilenceMs` of continuous silence (700 ms by default, longer than those pauses), a
 * burst shorter than `minSpeechMs` (a cough, a chair) never starts one, and the neural
 * detector's probability is read with hysteresis so a soft, trailing voice keeps the utterance open.
 */

export interface EndpointingConfig {
  /** Continuous speech needed before an utterance is confirmed. */
  minSpeechMs: number;
  /** Continuous silence that ends an utterance. */
  endpointSilenceMs: number;
  /** An utterance is cut here even if the senior is still speaking. */
  maxUtteranceMs: number;
}

/** Probability at or above which a window starts speech. */
export const SPEECH_START_THRESHOLD = 0.5;
/** Probability at or above which a window continues speech already under way (hysteresis, as Silero's own). */
export const SPEECH_CONTINUE_THRESHOLD = 0.35;

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

/** The speech decision of one window: hysteresis keeps speech going on a weaker probability. */
export function isSpeechWindow(probability: number, state: EndpointingState): boolean {
  return probability >= (state.phase === 'quiet' ? SPEECH_START_THRESHOLD : SPEECH_CONTINUE_THRESHOLD);
}

/** Advances endpointing by one window of `ms` milliseconds that was (or was not) speech. */
export function advanceEndpointing(state: EndpointingState, speech: boolean, ms: number, config: EndpointingConfig): EndpointingStep {
  switch (state.phase) {
    case 'quiet':
    case 'onset': {
      if (!speech) return STAY_QUIET;
      const speechMs = (state.phase === 'onset' ? state.speechMs : 0) + ms;
      if (speechMs < config.minSpeechMs) return { state: { phase: 'onset', speechMs } };
      return {
        state: { phase: 'speech', speechMs, silenceMs: 0, utteranceMs: speechMs },
        event: { type: 'started', onsetMs: speechMs },
      };
    }
    case 'speech': {
      const utteranceMs = state.utteranceMs + ms;
      const silenceMs = speech ? 0 : state.silenceMs + ms;
      if (silenceMs >= config.endpointSilenceMs) return { state: QUIET, event: { type: 'stopped', reason: 'silence' } };
      if (utteranceMs >= config.maxUtteranceMs) return { state: QUIET, event: { type: 'stopped', reason: 'max_length' } };
      return { state: { phase: 'speech', speechMs: state.speechMs + (speech ? ms : 0), silenceMs, utteranceMs } };
    }
  }
}

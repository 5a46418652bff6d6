/**
 * Barge-in: when the senior's speech interrupts the reply being played, and what of the reply they
 * actually heard. Backchannels (« oui », « d'accord », « mmh ») are a listener's encouragement, not
 * an interruption — the most reported complaint about voice agents is being cut off by them. Nor is
 * a cough, the television or a chair: speech for the detector that brings no word pauses the reply,
 * which resumes where it stopped once the noise ends without words (a false interruption).
 */

const BACKCHANNEL_PHRASES = [
  'oui', 'ouais', 'ouai', 'ok', 'okay', 'dac', "d'accord", "d'acc", 'ah bon', 'ah oui', 'oh oui', 'ah', 'oh', 'eh',
  'bon', 'bien', 'tres bien', 'voila', 'je vois', 'tout a fait', "c'est vrai", 'exactement', 'bien sur', 'ah d\'accord',
]
  .map((phrase) => phrase.split(' '))
  // Longest first so « ah bon » is taken whole before « ah ».
  .sort((a, b) => b.length - a.length);

/** Hums of any length: hum, hmm, mmh, mhm, mh, hm, mmmh… */
const HUM = /^(?:h?m+h?m*|hu+m+|h+m+)$/;
/** « euh », « euuuh », « heu »: a hesitation carries no words either, like « ah » or « eh » in the list. */
const HESITATION = /^h?eu+h*$/;

/** Lower-case words without accents or punctuation; typographic apostrophes made plain. */
export function normalizedWords(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\u2019\u2018`´]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, ' ')
    .split(' ')
    .filter((word) => word.length > 0 && word !== "'");
}

/** True when the whole utterance is made of backchannels (« oui oui », « ah bon ? », « mmh, d'accord »). */
export function isBackchannel(text: string): boolean {
  const words = normalizedWords(text);
  if (words.length === 0) return false;
  let i = 0;
  outer: while (i < words.length) {
    if (HUM.test(words[i]!) || HESITATION.test(words[i]!)) {
      i++;
      continue;
    }
    for (const phrase of BACKCHANNEL_PHRASES) {
      if (phrase.every((word, k) => words[i + k] === word)) {
        i += phrase.length;
        continue outer;
      }
    }
    return false;
  }
  return true;
}

export interface BargeInInput {
  /** Confirmed speech in the current utterance. */
  speechMs: number;
  /** Audio of the utterance since its `speech_started` (what the recognizer has had time to hear). */
  sinceStartMs: number;
  /** Interim transcript of the current utterance so far ('' before any). */
  interim: string;
  /** BARGE_IN_MIN_MS. */
  minMs: number;
  /** FALSE_INTERRUPTION_MS: no word by then, the speech is noise (a cough, the television, a chair) or the recognizer is late. */
  falseInterruptionMs: number;
  /** The kiosk cancels its own echo; without it the microphone is ignored while reply audio plays. */
  aec: boolean;
  /** Reply audio is playing at the kiosk (a paused reply still is). */
  playing: boolean;
}

/**
 * What the senior's speech does to the reply playing under it, re-evaluated on each interim
 * transcript and speech update:
 * - `cut`: words that are not a backchannel, over BARGE_IN_MIN_MS of speech — a real barge-in, at once;
 * - `pause`: over BARGE_IN_MIN_MS of speech and still no word FALSE_INTERRUPTION_MS after it started —
 *   noise, or a recognizer late with real words: the reply stops where it is, to resume if none come
 *   (the caller decides that when the utterance ends) or be cut if they do;
 * - `play`: anything else — short sounds, backchannels (« oui », « mmh »: never even paused, their
 *   words come well within the bound), speech whose words are not due yet.
 * Without echo cancellation the kiosk is half-duplex: only an explicit `interrupt` stops the reply.
 * The verdict only moves forward within an utterance (words never go away, time only grows), except
 * that a pause becomes `play` when the late words prove a backchannel.
 */
export function overReply({ speechMs, sinceStartMs, interim, minMs, falseInterruptionMs, aec, playing }: BargeInInput): 'play' | 'pause' | 'cut' {
  if (!playing || !aec || speechMs < minMs) return 'play';
  if (normalizedWords(interim).length === 0) return sinceStartMs >= falseInterruptionMs ? 'pause' : 'play';
  return isBackchannel(interim) ? 'play' : 'cut';
}

export interface EndpointInput {
  /** Confirmed speech of the utterance that just ended. */
  speechMs: number;
  /** Its final transcript (trimmed, not empty). */
  transcript: string;
  /** BARGE_IN_MIN_MS. */
  minMs: number;
  /** Reply audio is still playing at the kiosk. */
  playing: boolean;
}

/**
 * What an utterance's final transcript does once the senior stopped: a turn (cutting the reply if
 * one plays), or nothing while the reply plays when it was a backchannel or shorter than
 * BARGE_IN_MIN_MS — the same rule as while the senior is still speaking, so a short sound the
 * recognizer made a word of (« quoi », « euh… ») does not cut the reply either.
 */
export function endpointOutcome({ speechMs, transcript, minMs, playing }: EndpointInput): 'turn' | 'backchannel' | 'too_short' {
  if (!playing) return 'turn';
  if (isBackchannel(transcript)) return 'backchannel';
  return speechMs < minMs ? 'too_short' : 'turn';
}

export interface AudioMark {
  /** Sample of the reply audio where the text up to `textOffset` has been spoken. */
  sampleOffset: number;
  textOffset: number;
}

/**
 * What the senior heard of `reply`: the text up to the last sentence mark the kiosk played past,
 * never more than was sent. A sentence cut half-way is not heard (sentence granularity).
 */
export function heardText(reply: string, marks: readonly AudioMark[], playedSamples: number): string {
  if (!Number.isFinite(playedSamples) || playedSamples < 0) throw new RangeError(`heardText: playedSamples must be ≥ 0, got ${playedSamples}`);
  let heard = 0;
  for (const mark of marks) {
    if (mark.sampleOffset <= playedSamples && mark.textOffset > heard) heard = mark.textOffset;
  }
  return reply.slice(0, Math.min(heard, reply.length)).trimEnd();
}

/**
 * The end-of-turn decision: when the senior has stopped speaking, how much more silence to wait
 * before the utterance is taken as their turn. Pure and cheap (it reads the interim transcript's
 * last few words): the voice session asks it when a pause starts and again whenever the interim
 * transcript changes during the pause, and the listener ends the utterance once its silence reaches
 * the answer — never later than `maxMs`, so an abandoned sentence is always answered.
 *
 * - **Unfinished** (`unfinishedMs`): the transcript ends on a conjunction, a preposition, a
 *   determiner, a subject pronoun or an auxiliary/modal, a hesitation, an elided word (« l' »,
 *   « qu' »), or an unclosed clause (a comma, « … »). Such an ending is almost never a turn's end:
 *   the senior is looking for the next word.
 * - **Finished** (`minMs`): the recognizer closed the sentence (« . », « ? », « ! »), or it is a
 *   question by its form (« allez-vous », « est-ce que … »), or a time after a preposition
 *   (« à 3 », « vers 10 h »). Only on a transcript that changed since the pause began: the
 *   recognizer runs about half a second behind the audio, so the text seen when the pause starts may
 *   lack the last words (« Bonjour. Je voudrais » reads « Bonjour. » for a moment).
 * - **No cue** (`silenceMs`, ENDPOINT_SILENCE_MS): neither, or nothing transcribed yet; a falling
 *   level at the end of the speech (declarative French ends low) waits halfway to `minMs`, once the
 *   transcript has changed during the pause (the same caution as for a finished ending) — unless the
 *   text is the recognizer's final one for the audio so far (an early flush): then the recognizer has
 *   heard the same fall and left the sentence open, and its text is what the decision believes.
 *
 * The senior's own pause profile, once it holds enough pauses, moves the no-cue wait to their p90
 * mid-sentence pause plus a margin (between halfway-to-`minMs` and the unfinished wait) and lengthens
 * the unfinished wait to it (never above `maxMs`). The finished wait and the maximum are the
 * settings'.
 */
import { CONJUNCTIONS, DETERMINERS, HESITATIONS, PREPOSITIONS, PROCLITICS, QUANTIFYING_DETERMINERS } from '../french/word-classes.ts';
import { PAUSE_MARGIN_MS, PAUSE_MIN_COUNT, PAUSE_QUANTILE, pauseQuantile, type PauseProfile } from './pause-profile.ts';

export interface EndOfTurnSettings {
  /** ENDPOINT_MIN_MS: the wait after a finished sentence. */
  minMs: number;
  /** ENDPOINT_SILENCE_MS: the wait when nothing tells. */
  silenceMs: number;
  /** ENDPOINT_UNFINISHED_MS: the wait after an unfinished sentence. */
  unfinishedMs: number;
  /** ENDPOINT_MAX_MS: no silence lasts longer inside an utterance. */
  maxMs: number;
}

export type TurnCue = 'finished' | 'unfinished' | 'none';

export interface EndOfTurnInput {
  /** The utterance's interim transcript so far (never stored, never logged). */
  interim: string;
  /** The interim changed since this pause began: it is likely to hold the words said before it. */
  interimSincePause: boolean;
  /**
   * `interim` is the recognizer's final text of every word said before this pause (the stream was
   * flushed during it): nothing is missing, so its ending is believed at once. Absent: false.
   */
  final?: boolean;
  /** Silence so far in this pause, in ms of audio. */
  silenceMs: number;
  /** The level of the speech's last ~160 ms against the utterance's average, in dB (negative: falling); null when unknown. */
  levelDb: number | null;
  /** The senior's pauses (null: no consent, or none known). */
  profile: PauseProfile | null;
  settings: EndOfTurnSettings;
}

export interface EndOfTurn {
  /** The silence is long enough: the turn has ended. */
  readonly end: boolean;
  /** What the decision rests on. `falling`: no text cue, a falling level. */
  readonly cue: TurnCue | 'falling';
  /** The silence (ms) at which the utterance ends. */
  readonly endAtMs: number;
  /** ms of silence still to wait (0 when `end`). */
  readonly waitMs: number;
}

/** A level this far below the utterance's average at its end reads as a falling, final contour. */
export const FALLING_LEVEL_DB = -6;

export function validateEndOfTurnSettings(s: EndOfTurnSettings): void {
  for (const name of ['minMs', 'silenceMs', 'unfinishedMs', 'maxMs'] as const) {
    if (!Number.isFinite(s[name]) || s[name] <= 0) throw new RangeError(`end of turn: ${name} must be a positive number of ms, got ${s[name]}`);
  }
  if (!(s.minMs < s.silenceMs && s.silenceMs < s.unfinishedMs && s.unfinishedMs <= s.maxMs)) {
    throw new RangeError(`end of turn: needs minMs < silenceMs < unfinishedMs ≤ maxMs, got ${s.minMs}, ${s.silenceMs}, ${s.unfinishedMs}, ${s.maxMs}`);
  }
}

/** The three waits for this senior: the settings', moved by their pause profile when it says enough. */
export function sensedWaits(profile: PauseProfile | null, s: EndOfTurnSettings): { finishedMs: number; noCueMs: number; fallingMs: number; unfinishedMs: number } {
  const floor = Math.round((s.minMs + s.silenceMs) / 2);
  let noCueMs = s.silenceMs;
  let unfinishedMs = s.unfinishedMs;
  const typical = profile && profile.count >= PAUSE_MIN_COUNT ? pauseQuantile(profile, PAUSE_QUANTILE) : null;
  if (typical !== null) {
    const target = Math.round(typical + PAUSE_MARGIN_MS);
    // After an unfinished sentence the wait only grows: a senior who pauses long is never cut sooner.
    unfinishedMs = Math.min(s.maxMs, Math.max(unfinishedMs, target));
    // The no-cue wait follows the senior both ways, never below halfway to the finished wait (the
    // recognizer's last words must still have time to arrive) nor above the unfinished one.
    noCueMs = Math.min(unfinishedMs, Math.max(floor, target));
  }
  return { finishedMs: s.minMs, noCueMs, fallingMs: Math.min(noCueMs, floor), unfinishedMs };
}

export function endOfTurn(input: EndOfTurnInput): EndOfTurn {
  const waits = sensedWaits(input.profile, input.settings);
  const text = turnCue(input.interim);
  const caughtUp = input.final === true || input.interimSincePause;
  let cue: EndOfTurn['cue'];
  let endAtMs: number;
  if (text === 'unfinished') {
    cue = 'unfinished';
    endAtMs = waits.unfinishedMs;
  } else if (text === 'finished' && caughtUp) {
    cue = 'finished';
    endAtMs = waits.finishedMs;
  } else if (input.final !== true && input.interimSincePause && input.levelDb !== null && input.levelDb <= FALLING_LEVEL_DB) {
    // Believed only once the transcript has caught up and shows no unfinished ending.
    cue = 'falling';
    endAtMs = waits.fallingMs;
  } else {
    cue = 'none';
    endAtMs = waits.noCueMs;
  }
  endAtMs = Math.min(endAtMs, input.settings.maxMs);
  const waitMs = Math.max(0, endAtMs - input.silenceMs);
  return { end: waitMs === 0, cue, endAtMs, waitMs };
}

/**
 * ms of silence still to wait before the turn's work may start speculatively (the preemptive turn):
 * once the end is at most `leadMs` away — time enough for the model's first sentence and its speech
 * to be ready when the end comes — and not before the recognizer can have caught up with the words
 * said before the pause (`catchUpMs`, its streaming delay): a speculation on a transcript still
 * missing its last words would be thrown away when they come.
 */
export function preemptAfterMs(decision: EndOfTurn, silenceMs: number, o: { leadMs: number; catchUpMs: number }): number {
  return Math.max(0, decision.waitMs - o.leadMs, o.catchUpMs - silenceMs);
}

// --- French cues ---

/** Words after which a French sentence goes on. */
const UNFINISHED_WORDS = new Set([
  ...CONJUNCTIONS,
  ...PREPOSITIONS,
  // Determiners (« plusieurs » is a pronoun too: « j'en ai plusieurs ») and clitics said only before a
  // verb; an elided one (« l' », « j' ») keeps its apostrophe here and is caught as such.
  ...[...DETERMINERS, ...QUANTIFYING_DETERMINERS.filter((q) => q !== 'plusieurs'), ...PROCLITICS].filter((w) => w.length > 1),
  ...HESITATIONS,
]);

/** Endings of two or three words (elided words keep their apostrophe: « j' ai »). */
const UNFINISHED_PHRASES = [
  'il y a', 'il y avait', 'il y aura', 'y a',
  "j' ai", "j' avais", "j' étais", "j' aimerais", "j' allais", "j' vais",
  'je suis', 'je vais', 'je veux', 'je voulais', 'je voudrais', 'je peux', 'je pouvais', 'je dois', 'je devais',
  "c' est", "c' était", 'il est', 'elle est', 'on est', 'il était', 'elle était', 'il a', 'elle a', 'on a', 'on va', 'il va', 'elle va', 'tu as', 'tu es',
  'nous avons', 'nous sommes', 'vous avez', 'vous êtes', 'ils ont', 'elles ont', 'ils sont', 'elles sont', 'il faut', 'il fallait',
  "est-ce que", "est-ce qu'", 'alors que', 'pendant que', 'tandis que', 'bien que', 'afin de', 'à cause', 'en train',
].map((phrase) => phrase.split(' '));

/** Subject pronouns joined to their verb (« allez-vous », « viendra-t-il »): a question by its form. */
const INVERTED = /-(?:t-)?(?:je|tu|il|elle|on|nous|vous|ils|elles)$/;
/** Sentence openings that make a question (« pourquoi », « combien », « quel », « est-ce que »). */
const QUESTION_OPENING = /^(?:pourquoi|combien|quel|quelle|quels|quelles)$/;
const TIME_PREPOSITIONS = new Set(['à', 'vers', 'avant', 'après', 'dès', 'le', 'depuis', 'pour']);
const NUMBER = /^\d+(?:[,h:]\d*)?$/;

/** The last few words, lower-cased, elisions split off with their apostrophe (« qu'il » → « qu' », « il »). */
function lastWords(text: string): string[] {
  const words: string[] = [];
  for (const raw of text.split(/\s+/).slice(-5)) {
    const word = raw.replace(/[^\p{L}\p{N}'-]/gu, '');
    if (word === '') continue;
    const parts = word.split(/(?<=')/);
    for (const part of parts) if (part !== '' && part !== '-') words.push(part);
  }
  return words;
}

/** The transcript's ending read as French: finished, unfinished, or no cue. */
export function turnCue(interim: string): TurnCue {
  // The tail is enough, and bounded: the cost does not grow with the utterance.
  let tail = interim.slice(-160).toLowerCase().replace(/[’‘`´]/g, "'").trimEnd();
  tail = tail.replace(/[\s»"”)\]]+$/u, '');
  if (tail === '') return 'none';
  if (/(?:\.\.\.|…)$/.test(tail) || /[,;:–—-]$/.test(tail)) return 'unfinished';
  const closing = /[.?!]$/.exec(tail)?.[0];
  // « Et toi ? », « Ah bon ! »: the recognizer closed it, whatever the last word.
  if (closing === '?' || closing === '!') return 'finished';
  const sentence = tail.replace(/\.+$/, '');
  // The current sentence: what follows the last closing mark.
  const current = sentence.split(/[.?!]\s/).pop() ?? sentence;
  const words = lastWords(current);
  const last = words.at(-1);
  if (last === undefined) return closing ? 'finished' : 'none';
  // A period after « et » or « euh » is the recognizer's guess: the word says more.
  if (unfinishedEnding(words)) return 'unfinished';
  if (closing === '.') return 'finished';
  // A number after a preposition is a time or a date (« à 3 », « vers 10 h 30 », « le 12 »): complete.
  let i = words.length - 1;
  while (i >= 0 && (NUMBER.test(words[i]!) || words[i] === 'h')) i--;
  if (i < words.length - 1) return i >= 0 && TIME_PREPOSITIONS.has(words[i]!) ? 'finished' : 'none';
  if (INVERTED.test(last)) return 'finished';
  const opening = lastWords(current.trimStart().split(/\s+/, 1)[0] ?? '')[0] ?? '';
  if (QUESTION_OPENING.test(opening) || /\best-ce qu/.test(current) || current.endsWith("n'est-ce pas")) return 'finished';
  return 'none';
}

function unfinishedEnding(words: string[]): boolean {
  const last = words.at(-1)!;
  if (last.endsWith("'")) return true;
  for (const phrase of UNFINISHED_PHRASES) {
    if (phrase.length > words.length) continue;
    if (phrase.every((word, i) => words[words.length - phrase.length + i] === word)) return true;
  }
  // « j'en ai un », « il y en a une »: a pronoun, not a determiner.
  if ((last === 'un' || last === 'une') && words.slice(0, -1).includes('en')) return false;
  return UNFINISHED_WORDS.has(last);
}

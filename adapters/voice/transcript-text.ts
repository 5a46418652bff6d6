/**
 * What the transcription service's text means, whatever form it comes in: a final text that repeats the
 * socket's earlier finals (reported: pipecat#4485), live text in word fragments (LiveKit's plugin).
 * Transcripts only pass through here, in RAM; nothing is logged.
 */

/** A word as compared: case, apostrophes and punctuation aside (« Marché, » and « marché » are one). */
function compared(word: string): string {
  return word
    .normalize('NFC')
    .toLowerCase()
    .replace(/[’‘`´]/g, "'")
    .replace(/[^\p{L}\p{N}']/gu, '');
}

/** A word of the text as written, and the words it compares as (« petit-fils » as « petit fils »; « ? » as none). */
interface Token {
  raw: string;
  words: string[];
}

const tokensOf = (text: string): Token[] =>
  text
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((raw) => ({ raw, words: raw.split('-').map(compared).filter(Boolean) }));

const wordsOf = (tokens: Token[]): string[] => tokens.flatMap((t) => t.words);

/** Fewer words than this before could be the senior's own repetition (« Oui. » … « Oui, merci. »), not the service's. */
const SURE_WORDS = 3;
/** A revised final may differ from the finals before it by this share of their words (at least one). */
const REVISED_SHARE = 0.25;
/** A revised final's cut is looked for this many words either side of where the earlier finals end. */
const REVISED_REACH = 3;

const startsWith = (words: string[], prefix: string[]): boolean => prefix.length <= words.length && prefix.every((w, i) => words[i] === w);

/**
 * One socket's final texts. A service that repeats in each final everything said since the socket opened
 * is told from one whose finals are each its own utterance by the finals and the utterance's live text
 * together: live text comes as deltas, new words only, so a final that repeats the socket's earlier finals
 * (their words, case and punctuation aside) goes on with the words its live text begins with, and one of
 * its own begins with them. A final with no live text before it (a recheck of a pause, words all held to
 * the flush) that begins with the earlier finals repeats them. Once `SURE_WORDS` words have shown which
 * kind the socket is, it stays so; on one known to repeat, a final that revised an earlier word is cut
 * where it matches the earlier finals best.
 */
export class SocketFinals {
  /** The compared words of what this socket has finalized, in order (its cumulative final, when it gives one). */
  private said: string[] = [];
  private kind: 'unknown' | 'cumulative' | 'separate' = 'unknown';

  /** Words held: a socket whose finals grow without end is to be replaced before they cost much. */
  get words(): number {
    return this.said.length;
  }

  /**
   * The text of this flush's utterance alone: `final` without the earlier finals it repeats. `live`: the
   * utterance's live text (the deltas since the last final). `repeated`: how many words were cut.
   */
  take(final: string, live: string): { text: string; repeated: number } {
    const tokens = tokensOf(final);
    const words = wordsOf(tokens);
    const liveWords = wordsOf(tokensOf(live));
    // A word or two again with no live text: the senior's « Oui » again, or a repeating socket's pause that
    // brought nothing new. Taken as said, and the socket's words left as they were, right either way after.
    if (this.kind === 'unknown' && liveWords.length === 0 && words.length === this.said.length && words.length < SURE_WORDS && startsWith(words, this.said)) {
      return { text: final.trim(), repeated: 0 };
    }
    const cut = this.kind === 'separate' || this.said.length === 0 ? 0 : this.cut(words, liveWords);
    if (cut > 0) {
      this.said = words;
      return { text: textAfter(tokens, cut), repeated: cut };
    }
    if (this.kind !== 'separate') this.said = [...this.said, ...words];
    return { text: final.trim(), repeated: 0 };
  }

  /** How many of `words` repeat the earlier finals (0: none — the final is the utterance's own). */
  private cut(words: string[], live: string[]): number {
    const said = this.said;
    const opening = live.slice(0, SURE_WORDS);
    if (startsWith(words, said)) {
      // Goes on with the live text's words (or no live text to tell): the earlier finals are repeated.
      if (opening.length === 0 || startsWith(words.slice(said.length), opening)) return this.repeated(said.length);
      // Begins as its own live text: the senior said the earlier words again.
      if (startsWith(words, opening)) return 0;
    } else if (said.length >= SURE_WORDS && this.kind === 'unknown' && opening.length > 0 && startsWith(words, opening)) {
      // Not the earlier finals, and its own live text: a socket whose finals are each their utterance.
      this.kind = 'separate';
      this.said = [];
      return 0;
    }
    // Only a socket known to repeat its finals may have revised them: a senior says « Je voudrais un café »,
    // then « Je voudrais un thé et des biscuits ».
    return this.kind === 'cumulative' ? revisedCut(said, words) : 0;
  }

  /** `cut` words repeat the earlier finals; as many as SURE_WORDS of them show the socket repeats its finals. */
  private repeated(cut: number): number {
    if (cut >= SURE_WORDS) this.kind = 'cumulative';
    return cut;
  }
}

/** The text as written after the first `cut` compared words (and the punctuation that closed them). */
function textAfter(tokens: Token[], cut: number): string {
  let seen = 0;
  let at = 0;
  while (at < tokens.length && seen < cut) seen += tokens[at++]!.words.length;
  while (at < tokens.length && tokens[at]!.words.length === 0) at += 1;
  return tokens
    .slice(at)
    .map((t) => t.raw)
    .join(' ');
}

/**
 * Where a final that revised some of the earlier finals' words stops repeating them: the cut near their
 * length whose words are fewest edits (word for word) from them, if few enough; 0 if none is.
 */
function revisedCut(said: string[], words: string[]): number {
  const from = Math.max(1, said.length - REVISED_REACH);
  const to = Math.min(words.length, said.length + REVISED_REACH);
  if (from > to) return 0;
  // Edit distance of `said` to every prefix of `words` up to `to`, one row per word of `said`.
  let row = Array.from({ length: to + 1 }, (_, j) => j);
  for (let i = 1; i <= said.length; i++) {
    const next = [i];
    for (let j = 1; j <= to; j++) next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (said[i - 1] === words[j - 1] ? 0 : 1)));
    row = next;
  }
  let best = 0;
  for (let cut = from; cut <= to; cut++) {
    if (best === 0 || row[cut]! < row[best]! || (row[cut] === row[best] && Math.abs(cut - said.length) < Math.abs(best - said.length))) best = cut;
  }
  return row[best]! <= Math.max(1, Math.floor(said.length * REVISED_SHARE)) ? best : 0;
}

/** `delta` goes on the word `text` ends with: the service sends pieces of words, not whole ones. */
export function continuesWord(text: string, delta: string): boolean {
  return /[\p{L}\p{N}]$/u.test(text) && /^[\p{L}\p{N}]/u.test(delta);
}

/**
 * Live text as it may be read: from a service that sends pieces of words, a text that does not end on a
 * space or a mark may end on half a word, and « de » (of « demain ») would read as an unfinished sentence —
 * so it ends at its last whole word. From one that sends whole words, all of it.
 */
export function readableLive(text: string, fragments: boolean): string {
  if (!fragments || /[\s\p{P}]$/u.test(text)) return text;
  return text.replace(/[\p{L}\p{N}'’-]+$/u, '').trimEnd();
}

import type { FactCategory } from './memory.port.ts';
import { CLITICS, DETERMINERS, PARTITIVES, SUBJECT_PRONOUNS } from '../french/word-classes.ts';
import { readerFold as fold } from './reader-fold.ts';

/** Mood tiers over a 0–100 score (documented in docs/memory.md). */
export const MOOD_TIERS = ['preoccupant', 'melancolique', 'neutre', 'enjoue'] as const;
export type MoodTier = (typeof MOOD_TIERS)[number];

export function moodTier(score: number): MoodTier {
  if (score < 30) return 'preoccupant';
  if (score < 50) return 'melancolique';
  if (score < 70) return 'neutre';
  return 'enjoue';
}

/** One exchange as the derivations see it (in memory only). */
export interface Exchange {
  transcript: string;
  replyText: string;
}

export interface MoodClassifierPort {
  /** A 0–100 score; throws when no score could be derived. */
  classify(exchange: Exchange): Promise<number>;
}

export interface ConversationSummarizerPort {
  /**
   * 2–3 neutral third-person sentences about `exchange`, or null: best-effort, never throws.
   * The verbatim guard also refuses an output that re-includes any of `session` (the other exchanges in memory).
   */
  summarize(exchange: Exchange, session?: readonly Exchange[]): Promise<string | null>;
}

export interface SegmentSummarizerPort {
  /** A few neutral third-person sentences about a whole session, or null: best-effort, never throws. */
  summarize(exchanges: readonly Exchange[]): Promise<string | null>;
}

export interface ExtractedFact {
  content: string;
  category: FactCategory;
  confidence: number;
}

/** A valid fact already held for the senior, as the extractor is shown it. */
export interface HeldFact {
  id: string;
  content: string;
  category: FactCategory;
}

/**
 * What a session does to the senior's facts (Mem0's ADD / UPDATE / DELETE / NOOP): a new fact; a
 * held fact that changed (`target`, the held fact's id, is superseded by `fact`); a held fact the
 * session showed no longer holds; a fact already held, unchanged. `target` is always the id of a
 * fact the extractor was shown.
 */
export type FactOperation =
  | { op: 'add'; fact: ExtractedFact }
  | { op: 'update'; target: string; fact: ExtractedFact }
  | { op: 'invalidate'; target: string }
  | { op: 'none'; target: string | null };

export interface MemoryExtractorPort {
  /** Durable facts from a session's exchanges; never throws, an empty list on failure. */
  extract(exchanges: Exchange[]): Promise<ExtractedFact[]>;
  /** The session's facts reconciled against `held`, one operation per fact; never throws, an empty list on failure. */
  reconcile(exchanges: Exchange[], held: readonly HeldFact[]): Promise<FactOperation[]>;
}

export const MIN_FACT_CONFIDENCE = 0.6;

/*
 * The non-verbatim guard: the seed's echoesTranscriptVerbatim (the summarizer's anti-copy guard)
 * made stricter, and the extractor's « garde anti-copier-coller », which it subsumes (50 copied
 * characters span more than VERBATIM_RUN_WORDS words of any real sentence). Every derived text —
 * per-turn, segment and window summaries, extracted facts, the dream's outputs — passes it
 * before it is kept anywhere.
 */

/** A derived text holding this many consecutive words of the session re-includes the verbatim. */
export const VERBATIM_RUN_WORDS = 5;
/** A senior utterance (a turn, or one of its sentences) of this many words or more is refused whole, even short. */
export const VERBATIM_UTTERANCE_WORDS = 3;
/** Quotation marks around this many words or more are quoted speech, whatever they quote. */
export const VERBATIM_QUOTE_WORDS = 2;
/**
 * A run or an utterance of this many letters or more is refused whatever separates its letters in
 * the derived text (« s a f i l l e », « s.a.f.i.l.l.e », « fi-lle »); shorter ones only word for word.
 */
export const VERBATIM_SPELLED_LETTERS = 10;

/** Which rule refused a text: safe to log, it names no conversation content. */
export type VerbatimRule = 'utterance' | 'run' | 'quote';

/** What a derived text must not re-include. */
export interface VerbatimSources {
  /** What the senior said: one entry per turn transcript. */
  utterances: readonly string[];
  /** Every other conversation text the derivation saw: the companion's replies (for the dream, its derived inputs). */
  texts: readonly string[];
  /** The senior's known names: like any proper name, never verbatim on their own. */
  names?: readonly string[];
}

export const verbatimSourcesOf = (exchanges: readonly Exchange[]): VerbatimSources => ({
  utterances: exchanges.map((e) => e.transcript),
  texts: exchanges.map((e) => e.replyText),
});

const WORD = /[\p{L}\p{N}]+/gu;

/** The words of a text already folded: lowercased, split on anything else. */
const wordsOf = (folded: string): string[] => folded.toLowerCase().match(WORD) ?? [];
/** Words as the guard compares them: read as a reader sees them (reader-fold.ts), lowercased, split on anything else (« l'hôpital » = « l hopital »). */
export const verbatimWords = (text: string): string[] => wordsOf(fold(text));

/**
 * Words that carry no one's wording: French function words, numbers spelled out, days, months
 * and time words. A run made only of these, numbers and proper names (« le 14 juillet »,
 * « Claire et Paul à Lyon ») is a name, place or date, not verbatim.
 */
const PLAIN_WORDS = new Set([
  ...DETERMINERS,
  ...PARTITIVES,
  ...SUBJECT_PRONOUNS,
  ...CLITICS,
  ...['c', 'ca', 'moi', 'toi', 'eux', 'qui', 'que', 'qu', 'quoi', 'dont', 'ou'],
  ...[
    'a dans par pour sur sous avec sans chez vers entre depuis pendant avant apres contre et mais donc or ni car si comme quand puis ne n pas',
    'deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize vingt trente quarante cinquante soixante cent cents mille premier premiere',
    'lundi mardi mercredi jeudi vendredi samedi dimanche janvier fevrier mars avril mai juin juillet aout septembre octobre novembre decembre',
    'hier demain aujourd hui matin soir midi minuit semaine semaines mois an ans annee annees heure heures prochain prochaine dernier derniere',
  ]
    .join(' ')
    .split(' '),
]);

/** Where a capital is no sign of a name: the start of a sentence, of a quotation, of a line. */
const SENTENCE_BREAK = /[.!?…:;\n"]/u;

/**
 * Proper names as the conversation wrote them: capitalized words not at a sentence start. Taken
 * from the sources only, never from the derived text: a model that capitalized a quotation word
 * by word would otherwise make it pass as names.
 */
function namesIn(folded: string, into: Set<string>): void {
  for (const sentence of folded.split(SENTENCE_BREAK)) {
    const words = sentence.match(WORD) ?? [];
    for (const word of words.slice(1)) if (/^\p{Lu}/u.test(word)) into.add(word.toLowerCase());
  }
}

/** Quotation marks of every style and script, folded to one; one opens, the next closes, whatever their kinds (so « … ” and „ … “ pair too). */
const QUOTE_MARK = '"';
/** A word of a quotation, elisions and hyphens kept inside it: « l'hôpital » is one word. */
const QUOTED_WORD = /[\p{L}\p{N}]+(?:['‐-][\p{L}\p{N}]+)*/gu;
/** Verbs (and their forms) that introduce reported speech before a colon: « a dit : », « répond : », « s'est exclamée : »… */
const REPORTING_VERB = new RegExp(
  '^(?:(?:dit|dis|disait|disaient|disant|dira|dirait|dire|dites|confie|confia|confiait|crie|cria|criait|jure|jura|cite|citait|citant)$' +
    '|declar|repon|repliqu|retorqu|affirm|ajout|expliqu|racont|exclam|ecri|demand|murmur|chuchot|precis|annonc|repet|conclu|lanc|souffl|soupir|insist|protest|temoign|avou|hurl|enonc|prononc|formul|lach' +
    '|conseill|sugger|recommand|rappel|assur|promet|promis|interrog|questionn|reprend|repris|poursui|enchain)',
);
/** Within this many words before a colon: « lui a répondu : », « a dit à Claire : ». */
const REPORTING_REACH = 3;
/** Phrases that announce a quotation without a colon. */
const QUOTING_PHRASES = ['je cite', 'je la cite', 'je le cite', 'selon ses mots', 'selon ses propres mots', 'ses propres mots', 'en ces termes', 'mot pour mot', 'textuellement', 'citation', 'entre guillemets'];

/** Whether `folded` (a text as readerFold reads it) quotes speech. */
function quotesSpeech(folded: string): boolean {
  // Between an odd mark and the next one is inside a quotation; an unclosed one runs to the end.
  const quoted = folded.split(QUOTE_MARK).filter((_, i) => i % 2 === 1);
  if (quoted.some((span) => (span.match(QUOTED_WORD) ?? []).length >= VERBATIM_QUOTE_WORDS)) return true;
  const beforeColons = folded.split(':').slice(0, -1);
  if (beforeColons.some((before) => wordsOf(before).slice(-REPORTING_REACH).some((w) => REPORTING_VERB.test(w)))) return true;
  const padded = ` ${wordsOf(folded).join(' ')} `;
  return QUOTING_PHRASES.some((phrase) => padded.includes(` ${phrase} `));
}

/** The n-word windows of `words`, joined: the guard's unit of comparison, held in sets so a check stays linear. */
function* windows(words: readonly string[], n: number): Generator<string> {
  for (let i = 0; i + n <= words.length; i++) yield words.slice(i, i + n).join(' ');
}

/**
 * Compiles `sources` once into a check for any number of derived texts. It returns the rule a
 * text breaks, or null when the text may be kept:
 * - `quote`: quotation marks around VERBATIM_QUOTE_WORDS words or more, a speech-reporting colon
 *   (« a dit : ») or a quoting phrase (« je cite »);
 * - `utterance`: a whole senior utterance of VERBATIM_UTTERANCE_WORDS words or more;
 * - `run`: VERBATIM_RUN_WORDS consecutive words of any source.
 * Texts are compared as a reader sees them (reader-fold.ts: look-alike letters of other scripts,
 * invisible characters, compatibility forms, accents, case, punctuation and apostrophes aside;
 * quotation marks of every script), word for word, and letter for letter for the runs and
 * utterances of VERBATIM_SPELLED_LETTERS letters or more, whatever separates the letters. A run
 * or an utterance made only of proper names, numbers, dates and function words does not count.
 */
export function verbatimGuard(sources: VerbatimSources): (text: string) => VerbatimRule | null {
  // Each source folded once: folding is most of what compiling costs.
  const utterances = sources.utterances.map(fold);
  const all = [...utterances, ...sources.texts.map(fold)];
  const names = new Set((sources.names ?? []).flatMap(verbatimWords));
  for (const folded of all) namesIn(folded, names);
  const isRemarkable = (w: string) => !PLAIN_WORDS.has(w) && !names.has(w) && !/\p{N}/u.test(w);
  const remarkable = (words: readonly string[]) => words.some(isRemarkable);

  const runs = new Set<string>();
  for (const folded of all) {
    const words = wordsOf(folded);
    // The last remarkable word seen: a window holds one when it starts at or before it.
    let lastRemarkable = -1;
    for (let end = 0; end < words.length; end++) {
      if (isRemarkable(words[end]!)) lastRemarkable = end;
      const start = end - VERBATIM_RUN_WORDS + 1;
      if (start >= 0 && lastRemarkable >= start) runs.add(words.slice(start, end + 1).join(' '));
    }
  }
  // Utterances of VERBATIM_RUN_WORDS words or more are already refused by their runs: only the
  // shorter ones (a whole turn, or one sentence of a turn) need a set of their own.
  const short = new Map<number, Set<string>>();
  for (const utterance of utterances) {
    for (const unit of [utterance, ...utterance.split(/[.!?…;\n]/u)]) {
      const words = wordsOf(unit);
      if (words.length < VERBATIM_UTTERANCE_WORDS || words.length >= VERBATIM_RUN_WORDS || !remarkable(words)) continue;
      const ofLength = short.get(words.length) ?? new Set<string>();
      short.set(words.length, ofLength.add(words.join(' ')));
    }
  }

  const spelled = new SpelledIndex();
  for (const utterances of short.values()) for (const utterance of utterances) spelled.add(utterance, 'utterance');
  for (const run of runs) spelled.add(run, 'run');

  return (text) => {
    const folded = fold(text);
    if (quotesSpeech(folded)) return 'quote';
    const words = wordsOf(folded);
    for (const [n, utterances] of short) for (const window of windows(words, n)) if (utterances.has(window)) return 'utterance';
    for (const window of windows(words, VERBATIM_RUN_WORDS)) if (runs.has(window)) return 'run';
    return spelled.find(words);
  };
}

/**
 * Runs and utterances by their letters alone (« s a f i l l e C l a i r e » holds « ma fille
 * claire habite a »'s letters once its separators are gone), keyed by their first
 * VERBATIM_SPELLED_LETTERS letters so a check costs one look-up per word of the text. A match
 * starts and ends where a word of the text does: letters alone would otherwise find « raconte
 * moi une histoire d » (from « d'amour ») in « raconte-moi une histoire drôle ».
 */
class SpelledIndex {
  private readonly byPrefix = new Map<string, Array<{ letters: string; rule: VerbatimRule }>>();

  /** `joined`: words joined by spaces; too short to be told from chance, it is left to the word rules. */
  add(joined: string, rule: VerbatimRule): void {
    const letters = joined.replaceAll(' ', '');
    if (letters.length < VERBATIM_SPELLED_LETTERS) return;
    const key = letters.slice(0, VERBATIM_SPELLED_LETTERS);
    const entries = this.byPrefix.get(key) ?? [];
    if (entries.length === 0) this.byPrefix.set(key, entries);
    entries.push({ letters, rule });
  }

  /** The rule of the first indexed run or utterance whose letters `words` hold from one word's start to another's end, or null. */
  find(words: readonly string[]): VerbatimRule | null {
    const letters = words.join('');
    const boundaries = new Set<number>();
    let offset = 0;
    for (const word of words) boundaries.add((offset += word.length));
    for (let start = 0, w = 0; start + VERBATIM_SPELLED_LETTERS <= letters.length; start += words[w++]!.length) {
      for (const entry of this.byPrefix.get(letters.slice(start, start + VERBATIM_SPELLED_LETTERS)) ?? []) {
        if (letters.startsWith(entry.letters, start) && boundaries.has(start + entry.letters.length)) return entry.rule;
      }
    }
    return null;
  }
}

/** The guard for one text (seed name): the rule `output` breaks against `sources`, or null. */
export const echoesTranscriptVerbatim = (output: string, sources: VerbatimSources): VerbatimRule | null => verbatimGuard(sources)(output);

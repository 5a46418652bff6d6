/**
 * The content-word guard: two questions may share a cached answer only if every content word
 * (noun, adjective, verb, question word — after French stop words and a light stemmer) of one is
 * matched in the other by the same stem or a listed equivalent, and no pair of opposites
 * (« chaud » / « froid », « allumer » / « éteindre ») sits across them. Embeddings score « histoire
 * drôle » and « histoire triste », « mal au dos » and « mal au ventre » as near-identical; this
 * guard proves equivalence instead of guessing it, so a paraphrase it cannot prove is a miss
 * (one model call), never a false hit. Pure and cheap: one pass of regexes and map look-ups.
 */
import { CONTRASTS, EQUIVALENTS, QUESTION_WORDS, STOP_WORDS } from './french-lexicon.ts';
import { NUMBER_WORDS } from './question-details.ts';

export interface ContentSignature {
  /** The sorted, distinct content keys joined by spaces: two questions agree on content when equal. */
  key: string;
  /** The keys, stop words included, that have an opposite in the contrast lexicon. */
  contrasts: string[];
}

/**
 * The question's words as said (lower case, accents kept: « à » is not « a », « déménagé » is a
 * participle) and folded (accents off: what the lexicon is matched against). Elisions and
 * hyphens split words: « l'hôpital » → « l », « hôpital »; « dis-moi » → « dis », « moi ».
 */
export function words(text: string): { said: string[]; folded: string[] } {
  const said = text
    .toLowerCase()
    .normalize('NFC')
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae')
    .replace(/[’'`\-]/g, ' ')
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  // « où » (where) would fold to « ou » (or).
  const folded = said.map((w) => (w === 'où' ? 'ouwh' : w.normalize('NFD').replace(/\p{Diacritic}/gu, '')));
  return { said, folded };
}
const fold = (list: string) => words(list).folded;

/**
 * A light French stemmer: plural, feminine and the common verb endings, one suffix at most, never
 * below three letters. It only has to give a word and its inflections one stem; words it cannot
 * join (« œil » / « yeux », « beau » / « belle ») are listed in the lexicon.
 */
const SUFFIXES: ReadonlyArray<readonly [string, number]> = [
  ['issions', 3], ['issiez', 3], ['issent', 3], ['issons', 3], ['issez', 3], ['issait', 3], ['issais', 3],
  ['eraient', 3], ['erions', 3], ['eriez', 3], ['erait', 3], ['erais', 3], ['erons', 3], ['eront', 3], ['erai', 3], ['eras', 3], ['era', 3], ['erez', 3],
  ['aient', 3], ['ions', 3], ['iez', 3], ['ait', 3], ['ais', 3], ['ant', 4], ['ent', 4], ['ons', 3], ['ez', 3], ['er', 3], ['ir', 3], ['ee', 3], ['ie', 3], ['e', 3], ['i', 3],
];
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith('eaux')) w = w.slice(0, -1);
  else if (w.endsWith('aux')) w = `${w.slice(0, -3)}al`;
  else if (/[sx]$/.test(w)) w = w.slice(0, -1);
  for (const [suffix, keep] of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length >= keep) return w.slice(0, -suffix.length);
  }
  return w;
}

const STOPS = new Set(fold(STOP_WORDS));
const NUMBERS = new Set(Object.keys(NUMBER_WORDS));
const QUESTIONS = new Map(Object.entries(QUESTION_WORDS).map(([w, key]) => [fold(w)[0]!, key]));

/** Every listed word, and its stem, to its group's name (the group's first word). */
const GROUPS = new Map<string, string>();
for (const group of EQUIVALENTS) {
  const members = fold(group);
  const name = `=${members[0]!}`;
  for (const w of members) GROUPS.set(w, name);
  for (const w of members) if (!GROUPS.has(stem(w))) GROUPS.set(stem(w), name);
}

/** The key a word is matched by: its group's name, or its stem. */
export function contentKey(word: string): string {
  return GROUPS.get(word) ?? GROUPS.get(stem(word)) ?? stem(word);
}

const OPPOSITES = new Map<string, Set<string>>();
for (const [a, b] of CONTRASTS) {
  const [ka, kb] = [contentKey(fold(a)[0]!), contentKey(fold(b)[0]!)];
  OPPOSITES.set(ka, (OPPOSITES.get(ka) ?? new Set()).add(kb));
  OPPOSITES.set(kb, (OPPOSITES.get(kb) ?? new Set()).add(ka));
}

/** What follows an impersonal « il » (« il faut », « il y a », « s'il te plaît »). */
const IMPERSONAL = new Set(['faut', 'faudra', 'faudrait', 'fallait', 'y', 'semble', 'parait', 'vaut', 'te', 'vous']);
/** What precedes an interrogative « qui » inside a question (« c'est qui », « avec qui »). */
const ASKS_WHO_AFTER = new Set(['est', 'c', 'sont', 'a', 'avec', 'de', 'pour', 'chez', 'par']);
const GIVE = new Set(['donne', 'donnez']);
const EXPLAIN = new Set(['explique', 'expliques', 'expliquez', 'expliquer']);

/**
 * Tense: « mon voisin a déménagé ? » is not « mon voisin va déménager ? ». A past (auxiliary then
 * participle) on one side and a future (« aller » then an infinitive, or a future ending) on the
 * other refuse like opposites. « aller » before an infinitive is that future, not a movement.
 */
const PAST = 't:past';
const FUTURE = 't:future';
OPPOSITES.set(PAST, new Set([FUTURE]));
OPPOSITES.set(FUTURE, new Set([PAST]));
const ALLER = '=aller';
const INFINITIVE = /(er|ir|re|oir)$/;
const CLITICS = new Set(['moi', 'toi', 'me', 'm', 'te', 't', 'se', 's', 'le', 'la', 'les', 'l', 'lui', 'leur', 'y', 'en', 'nous', 'vous', 'je', 'j', 'tu', 'il', 'elle', 'on', 'ils', 'elles', 'ne', 'n', 'pas', 'plus', 'jamais', 'bien', 'déjà', 'encore', 'toujours', 'tout']);
const AVOIR = new Set(['ai', 'as', 'a', 'avons', 'avez', 'ont']);
const ETRE = new Set(['suis', 'es', 'est', 'sommes', 'êtes', 'sont']);
const IRREGULAR_PARTICIPLES = new Set('fait dit écrit pris mis appris compris ouvert offert souffert eu été su pu voulu dû vu bu lu plu cru reçu connu venu tenu vécu né née mort morte'.split(' '));
const participle = (w: string, after: 'avoir' | 'etre') =>
  /(é|ée|és|ées)$/.test(w) || IRREGULAR_PARTICIPLES.has(w) || (after === 'avoir' ? /[^aeiouy](i|u)$/ : /[^aeiouy](ie?s?|ue?s?)$/).test(w);
const FUTURE_FORM = /^(ser|aur|fer|ir|viendr|reviendr|pourr|voudr|devr|faudr|pleuvr|verr|saur|tiendr|enverr)(ai|as|a|ons|ez|ont)$|..(erai|eras|era|erons|erez|eront|irai|iras|ira|irons|irez|iront)$/;
/** The first word after `i` that is not a clitic, a pronoun or a negation (« n'a pas encore déménagé »). */
const nextWord = (said: string[], i: number) => said.slice(i + 1).find((t) => !CLITICS.has(t)) ?? '';

export function contentSignature(question: string): ContentSignature {
  const { said, folded: tokens } = words(question);
  const keys = new Set<string>();
  const contrasts = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]!;
    if (AVOIR.has(said[i]!) && participle(nextWord(said, i), 'avoir')) contrasts.add(PAST);
    if (ETRE.has(said[i]!) && participle(nextWord(said, i), 'etre')) contrasts.add(PAST);
    if (FUTURE_FORM.test(said[i]!)) contrasts.add(FUTURE);
    // « qu'est-ce que » and « ce que » (« dis-moi ce qu'il y a ») ask « what », as « quoi » and « quel » do;
    // « est-ce que » only makes a question.
    if (word === 'qu' && tokens[i + 1] === 'est' && tokens[i + 2] === 'ce') {
      keys.add('q:what');
      i += tokens[i + 3] === 'qui' ? 3 : 2;
      continue;
    }
    if (word === 'est' && tokens[i + 1] === 'ce' && /^qu/.test(tokens[i + 2] ?? '')) {
      i += 2;
      continue;
    }
    if (word === 'ce' && /^qu/.test(tokens[i + 1] ?? '')) {
      keys.add('q:what');
      i += 1;
      continue;
    }
    // « qui » asks « who » where a question puts it (first, last, after « c'est » or a preposition);
    // elsewhere it is a relative (« le dos qui me fait mal »).
    if (word === 'qui' && i > 0 && i < tokens.length - 1 && !ASKS_WHO_AFTER.has(tokens[i - 1]!)) continue;
    // « donne-moi … » and « explique-moi comment … » only ask to be told (« explique-moi le Notre Père » does not).
    if ((GIVE.has(word) && tokens[i + 1] === 'moi') || (EXPLAIN.has(word) && QUESTIONS.has(nextWord(tokens, i)))) continue;
    const question = QUESTIONS.get(word);
    if (question) {
      keys.add(question);
      continue;
    }
    if (/^\d/.test(word) || NUMBERS.has(word)) continue; // numbers belong to the detail guard
    const key = contentKey(word);
    // The impersonal « il » is about no one: no contrast with « je » or « tu ».
    const impersonal = word === 'il' && IMPERSONAL.has(tokens[i + 1] ?? '');
    if (OPPOSITES.has(key) && !impersonal) contrasts.add(key);
    if (STOPS.has(word) || word.length < 2) continue;
    if (key === ALLER && INFINITIVE.test(nextWord(said, i))) {
      contrasts.add(FUTURE);
      continue;
    }
    keys.add(key);
  }
  // A question with no content word at all (« tu es là ? ») proves nothing: only its own words match it.
  const key = keys.size > 0 ? [...keys].sort().join(' ') : `~${[...tokens].sort().join(' ')}`;
  return { key, contrasts: [...contrasts] };
}

/** True when neither question has a content word the other lacks, and no opposites sit across them. */
export function contentAgree(a: ContentSignature, b: ContentSignature): boolean {
  if (a.key !== b.key) return false;
  for (const x of a.contrasts) {
    if (b.contrasts.includes(x)) continue;
    for (const y of OPPOSITES.get(x)!) if (b.contrasts.includes(y) && !a.contrasts.includes(y)) return false;
  }
  return true;
}

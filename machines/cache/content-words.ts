/**
 * The content-word guard: two questions may share a cached answer only if every content word
 * (noun, adjective, verb, question word — after French stop words and a light stemmer) of one is
 * matched in the other by the same stem or a listed equivalent, and no pair of opposites
 * (« chaud » / « froid », « allumer » / « éteindre ») sits across them. Embeddings score « histoire
 * drôle » and « histoire triste », « mal au dos » and « mal au ventre » as near-identical; this
 * guard proves equivalence instead of guessing it, so a paraphrase it cannot prove is a miss
 * (one model call), never a false hit. Pure and cheap: one pass of regexes and map look-ups.
 */
import { CONTRASTS, DATE_NOUNS, EQUIVALENTS, HOW_NOUNS, QUESTION_WORDS, REQUEST_VERBS, STOP_WORDS, WHEN_NOUNS } from './french-lexicon.ts';
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
/** The words the lexicon lists: a stop word has a contrast only as itself (« sur »), never by its stem (« peux » is no « peu »). */
const LISTED = new Set([...EQUIVALENTS, ...CONTRASTS.flat()].flatMap(fold));
for (const [a, b] of CONTRASTS) {
  const [ka, kb] = [contentKey(fold(a)[0]!), contentKey(fold(b)[0]!)];
  OPPOSITES.set(ka, (OPPOSITES.get(ka) ?? new Set()).add(kb));
  OPPOSITES.set(kb, (OPPOSITES.get(kb) ?? new Set()).add(ka));
}

/** What follows an impersonal « il » (« il faut », « il y a », « s'il te plaît », « il pleut »), and the weather after « il va ». */
const IMPERSONAL = new Set(['faut', 'faudra', 'faudrait', 'fallait', 'y', 'semble', 'parait', 'vaut', 'te', 'vous', 'pleut', 'pleuvra', 'neige', 'neigera']);
const WEATHER = new Set(['pleuvoir', 'neiger', 'faire']);
/** What precedes an interrogative « qui » inside a question (« c'est qui », « avec qui », « tu sais qui », « hier, qui »). */
const ASKS_WHO_AFTER = new Set(['est', 'c', 'sont', 'a', 'avec', 'de', 'pour', 'chez', 'par', 'sais', 'savez', 'savoir', 'moi', 'demande', 'hier', 'demain', 'hui', 'soir', 'matin', 'alors']);
/** « donne-moi », « tu peux me donner », « lis-moi », « tu me lis » ask to be told, as « dis-moi » does. */
const GIVE = new Set(['donne', 'donnes', 'donnez', 'donner', 'lis', 'lisez', 'lire']);
const REQUESTS = new Set(fold(REQUEST_VERBS));
const HOW = new Set(fold(HOW_NOUNS));
const WHEN = new Set(fold(WHEN_NOUNS));
const DATE = new Set(fold(DATE_NOUNS));
const WHICH = new Set(['quel', 'quelle', 'quels', 'quelles']);
/** Answer-neutral before a noun: « un bon vin blanc », « la bonne façon » (« le pain est bon » keeps it). */
const DETERMINERS = new Set(['un', 'une', 'des', 'le', 'la', 'les', 'l', 'du', 'de', 'd']);
/** What follows a softening « un peu »: a comparative or the object of a verb (« un peu plus fort », « monte un peu le son »). */
const SOFTENED = new Set(['plus', 'moins', 'le', 'la', 'les', 'l']);
const REFLEXIVE = new Set(['me', 'm', 'te', 't', 'se', 's', 'nous', 'vous']);
/** The pronouns between a request verb and what it asks (« dis-moi », « tu peux me dire »). */
const TO_ME = new Set(['moi', 'me', 'm', 'nous', 'vous', 'te', 't', 'lui']);
const EXPLAIN = new Set(['explique', 'expliques', 'expliquez', 'expliquer']);

/**
 * Tense: « mon voisin a déménagé ? » is not « mon voisin va déménager ? ». A past (auxiliary then
 * participle) on one side and a future (« aller » then an infinitive, or a future ending) on the
 * other refuse like opposites. « aller » before an infinitive is that future, not a movement.
 */
const PAST = 't:past';
const HAPPENED = 't:happened';
const FUTURE = 't:future';
OPPOSITES.set(PAST, new Set([FUTURE]));
OPPOSITES.set(FUTURE, new Set([PAST]));
const ALLER = '=aller';
const INFINITIVE = /(er|ir|re|oir)$/;
const CLITICS = new Set(['moi', 'toi', 'me', 'm', 'te', 't', 'se', 's', 'le', 'la', 'les', 'l', 'lui', 'leur', 'y', 'en', 'nous', 'vous', 'je', 'j', 'tu', 'il', 'elle', 'on', 'ils', 'elles', 'ne', 'n', 'pas', 'plus', 'jamais', 'bien', 'déjà', 'encore', 'toujours', 'tout']);
const AVOIR = new Set(['ai', 'as', 'a', 'avons', 'avez', 'ont']);
const ETRE = new Set(['suis', 'es', 'est', 'sommes', 'êtes', 'sont']);
const IRREGULAR_PARTICIPLES = new Set(
  ('fait dit écrit pris mis appris compris repris surpris promis permis remis admis assis acquis ouvert couvert découvert offert souffert ' +
    'éteint peint atteint craint plaint joint rejoint teint cuit conduit construit détruit produit traduit ' +
    'eu été su pu voulu dû vu bu lu plu cru reçu connu venu tenu vécu né née mort morte').split(' '),
);
// « du » is the article (« j'ai du mal à dormir »); the participle « dû » keeps its accent.
const participle = (w: string, after: 'avoir' | 'etre') =>
  w !== 'du' && (/(é|ée|és|ées)$/.test(w) || IRREGULAR_PARTICIPLES.has(w) || (after === 'avoir' ? /[^aeiouy](i|u)$/ : /[^aeiouy](ie?s?|ue?s?)$/).test(w));
const FUTURE_FORM = /^(ser|aur|fer|ir|viendr|reviendr|pourr|voudr|devr|faudr|pleuvr|verr|saur|tiendr|enverr)(ai|as|a|ons|ez|ont)$|..(erai|eras|era|erons|erez|eront|irai|iras|ira|irons|irez|iront)$/;
/** The first word after `i` that is not a clitic, a pronoun or a negation (« n'a pas encore déménagé »). */
const nextWord = (said: string[], i: number) => said.slice(i + 1).find((t) => !CLITICS.has(t)) ?? '';

/**
 * Whether the request verb at `i` asks « what »: not when « je » says it (« je connais une
 * blague »), nor before a yes/no « si » (« dis-moi s'il neige »).
 */
function asksWhat(tokens: string[], i: number): boolean {
  let before = i - 1;
  while (before >= 0 && REFLEXIVE.has(tokens[before]!) && tokens[before] !== 'nous' && tokens[before] !== 'vous') before -= 1;
  if (tokens[before] === 'je' || tokens[before] === 'j') return false;
  let after = i + 1;
  while (TO_ME.has(tokens[after] ?? '')) after += 1;
  const next = tokens[after] ?? '';
  return !(next === 'si' || next === 'que' || next === 'qu' || (next === 's' && /^ils?$/.test(tokens[after + 1] ?? '')));
}

/** « donne-moi », « tu me donnes », « tu me les lis »: the verb at `i` is said to the senior. */
const toMe = (tokens: string[], i: number) =>
  tokens[i + 1] === 'moi' || /^(me|m)$/.test(tokens[i - 1] ?? '') || (/^(le|la|les|l)$/.test(tokens[i - 1] ?? '') && /^(me|m)$/.test(tokens[i - 2] ?? ''));

const MODALS = new Set(['peux', 'peut', 'pourrais', 'pourriez', 'pouvez', 'veux', 'voulez', 'voudrais', 'voudriez', 'bien']);
/**
 * Whether the « tu » at `i` only asks (« tu sais si… », « tu peux me dire… », « tu te souviens… »,
 * « tu as une recette… »): it is the one asked, not the one the question is about, so it has no
 * contrast with « je » (« tu es fatiguée ? » / « je suis fatiguée ? » keeps it).
 */
function asksOnly(tokens: string[], i: number): boolean {
  let j = i + 1;
  while (TO_ME.has(tokens[j] ?? '') || MODALS.has(tokens[j] ?? '') || tokens[j] === 'se') j += 1;
  const verb = tokens[j] ?? '';
  if (REQUESTS.has(verb) || GIVE.has(verb)) return true;
  return (verb === 'as' || verb === 'avez') && /^(un|une|des)$/.test(tokens[j + 1] ?? '') && (HOW.has(tokens[j + 2] ?? '') || tokens[j + 2] === 'idee');
}

/** Where « passer » and « programme » only say « on air » (« il passe quoi à la télé » is « qu'est-ce qu'il y a à la télé »). */
const BROADCAST = new Set(['tele', 'television', 'radio', 'chaine', 'cinema', 'cine']);
const ON_AIR = /^(pass|programme)/;

export function contentSignature(question: string): ContentSignature {
  const { said, folded: tokens } = words(question);
  const keys = new Set<string>();
  const contrasts = new Set<string>();
  let request = false;
  let how = false;
  let when = false;
  let named = false;
  let falls = false;
  const broadcast = tokens.some((t) => BROADCAST.has(t));
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]!;
    // « tu as une idée de film ? » asks as « tu me conseilles un film ? » does.
    if ((REQUESTS.has(word) || (word === 'idee' && /^(as|avez)$/.test(tokens[i - 2] ?? ''))) && asksWhat(tokens, i)) request = true;
    if (HOW.has(word)) {
      how = true;
      continue;
    }
    if (DATE.has(word) || (WHEN.has(word) && WHICH.has(tokens[i - 1] ?? ''))) {
      when = true;
      continue;
    }
    // « comment il s'appelle » asks his name: « c'est quoi son nom ».
    if (contentKey(word) === '=appeler' && /^(s|t|m|vous|nous)$/.test(tokens[i - 1] ?? '')) {
      named = true;
      keys.add('nom');
      continue;
    }
    if (AVOIR.has(said[i]!) && participle(nextWord(said, i), 'avoir')) {
      contrasts.add(PAST);
      // An event told with « avoir » (« il y a eu », « tu as vu ») happened: a question without it asks of now.
      contrasts.add(HAPPENED);
    }
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
    // « donne-moi … », « tu peux me lire … » ask like « dis-moi … »; « explique-moi comment … » only asks
    // to be told (« explique-moi le Notre Père » does not).
    if (GIVE.has(word) && toMe(tokens, i)) {
      request = true;
      continue;
    }
    if (EXPLAIN.has(word) && QUESTIONS.has(nextWord(tokens, i))) continue;
    const question = QUESTIONS.get(word);
    if (question) {
      keys.add(question);
      continue;
    }
    if (/^\d/.test(word) || NUMBERS.has(word)) continue; // numbers belong to the detail guard
    const key = contentKey(word);
    // The impersonal « il » is about no one: no contrast with « je » or « tu ».
    const impersonal = word === 'il' && (IMPERSONAL.has(tokens[i + 1] ?? '') || (tokens[i + 1] === 'va' && WEATHER.has(tokens[i + 2] ?? '')));
    const asked = (word === 'tu' || word === 'vous' || word === 't') && asksOnly(tokens, i);
    if (OPPOSITES.has(key) && !impersonal && !asked && (!STOPS.has(word) || LISTED.has(word))) contrasts.add(key);
    if (STOPS.has(word) || word.length < 2) continue;
    // Answer-neutral, their opposite kept: « un bon vin », « un (petit) peu plus fort », « monte un peu le son »,
    // « je me sens seule » (« je suis seule »). « un peu salé », « un peu de sel » say how much: kept.
    if (key === '=bon' && DETERMINERS.has(tokens[i - 1] ?? '')) continue;
    if (word === 'peu' && /^(un|petit)$/.test(tokens[i - 1] ?? '') && SOFTENED.has(tokens[i + 1] ?? '')) continue;
    if (word === 'petit' && tokens[i + 1] === 'peu' && SOFTENED.has(tokens[i + 2] ?? '')) continue;
    if (key === '=sentir' && REFLEXIVE.has(tokens[i - 1] ?? '')) continue;
    if (broadcast && ON_AIR.test(word)) continue;
    // « passe me voir » is « vient »; « Pâques tombe quand ? » is « c'est quand Pâques ? » (checked below).
    if (key === '=voir' && contentKey(tokens[TO_ME.has(tokens[i - 1] ?? '') ? i - 2 : i - 1] ?? '') === '=venir') continue;
    if (/^tombe(nt|ra)?$/.test(word)) {
      falls = true;
      continue;
    }
    if (key === ALLER && INFINITIVE.test(nextWord(said, i))) {
      contrasts.add(FUTURE);
      continue;
    }
    keys.add(key);
  }
  // A request with no question word asks « what »; « la recette de », « la bonne façon de » ask « how »,
  // « la date de », « à quel moment » ask « when ».
  if (request && ![...keys].some((k) => k.startsWith('q:'))) keys.add('q:what');
  if (how || when) {
    keys.delete('q:what');
    keys.add(how ? 'q:how' : 'q:when');
  }
  if (named && keys.delete('q:how')) keys.add('q:what');
  // A date « tombe » (falls): only when the question asks when; « je suis tombée » is no date.
  if (falls && !keys.has('q:when')) keys.add(stem('tombe'));
  // A question with no content word at all (« tu es là ? ») proves nothing: only its own words match it.
  const key = keys.size > 0 ? [...keys].sort().join(' ') : `~${[...tokens].sort().join(' ')}`;
  return { key, contrasts: [...contrasts] };
}

/**
 * True when neither question has a content word the other lacks, no opposites sit across them, and
 * both or neither speak of the past: « il y a eu de l'orage ? » is not « il y a de l'orage ? ».
 */
export function contentAgree(a: ContentSignature, b: ContentSignature): boolean {
  if (a.key !== b.key) return false;
  if (a.contrasts.includes(HAPPENED) !== b.contrasts.includes(HAPPENED) && !(a.contrasts.includes(PAST) && b.contrasts.includes(PAST))) return false;
  for (const x of a.contrasts) {
    if (b.contrasts.includes(x) || x === HAPPENED) continue;
    for (const y of OPPOSITES.get(x)!) if (b.contrasts.includes(y) && !a.contrasts.includes(y)) return false;
  }
  return true;
}

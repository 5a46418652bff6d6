/**
 * The content-word guard: two questions may share a cached answer only if every content word
 * (noun, adjective, verb, question word — after French stop words and a light stemmer) of one is
 * matched in the other by the same stem or a listed equivalent, and no pair of opposites
 * (« chaud » / « froid », « allumer » / « éteindre ») sits across them. Embeddings score « histoire
 * drôle » and « histoire triste », « mal au dos » and « mal au ventre » as near-identical; this
 * guard proves equivalence instead of guessing it, so a paraphrase it cannot prove is a miss
 * (one model call), never a false hit. Pure and cheap: one pass of regexes and map look-ups.
 * This file builds the signature and compares two; a word's key and place are content-keys.ts', the
 * verb's tense tense.ts', request verbs and polite frames requests.ts'.
 */
import { DATE_NOUNS, QUESTION_WORDS, REQUEST_LEMMAS, WHEN_NOUNS } from '../french/lexicon.ts';
import { stem } from '../french/stemmer.ts';
import { ARTICLES, CLITICS as CLITIC_WORDS, DETERMINERS_OF_NOUNS, SUBJECT_PRONOUNS } from '../french/word-classes.ts';
import { fold, words, type Words } from '../french/words.ts';
import { CALENDAR, contentKey, infinitive, infinitivePosition, LISTED, nounPosition, OPPOSITES, STOPS } from './content-keys.ts';
import { AMBIGUOUS, determinerGender, homographReading, ORDINARY } from './homographs.ts';
import { NUMBER_WORDS } from './question-details.ts';
import { asksOnly, asksWhat, EXPLAIN, GIVE, HOW, MODAL_KEYS, plannedVisit, politeFrame, REFLEXIVE, REQUESTS, TO_ME, toMe } from './requests.ts';
import { afterItsSubject, cliticTarget, FUTURE, FUTURE_FORM, imperfect, MARK_OPPOSITES, PAST, pastAt, RECALL, RECALLS, SINCE, tenseFree } from './tense.ts';

export interface ContentSignature {
  /** The sorted, distinct content keys joined by spaces: two questions agree on content when equal. */
  key: string;
  /** The keys, stop words included, that have an opposite in the contrast lexicon. */
  contrasts: string[];
  /**
   * For each unlisted noun's key, whether it ended in « e » and the gender its determiner gave it
   * (« le port » / « la porte », « les ports » / « les portes », « le poste » / « la poste »): the key
   * drops a final « e » so a noun still joins the same word said as a verb or without a determiner
   * (« de Pâques » / « quand Pâques »), and these say what the key cannot.
   */
  nounEnds: Record<string, string>;
  nounGenders: Record<string, string>;
}

const NUMBERS = new Set(Object.keys(NUMBER_WORDS));
const QUESTIONS = new Map(Object.entries(QUESTION_WORDS).map(([w, key]) => [fold(w)[0]!, key]));

const IMPERSONAL_MUST = new Set(['faut', 'faudra', 'fallait', 'faudrait']);
const REQUEST_LEMMA = new Map(REQUEST_LEMMAS.flatMap((group) => fold(group).map((f) => [f, `v:${fold(group)[0]!}`] as const)));

/** What follows an impersonal « il » (« il faut », « il y a », « s'il te plaît », « il pleut »), and the weather after « il va ». */
const IMPERSONAL = new Set(['faut', 'faudra', 'faudrait', 'fallait', 'y', 'semble', 'parait', 'vaut', 'te', 'vous', 'pleut', 'pleuvra', 'neige', 'neigera']);
const WEATHER = new Set(['pleuvoir', 'neiger', 'faire']);
/** What precedes an interrogative « qui » inside a question (« c'est qui », « avec qui », « tu sais qui », « hier, qui »). */
const ASKS_WHO_AFTER = new Set(['est', 'c', 'sont', 'a', 'avec', 'de', 'pour', 'chez', 'par', 'sais', 'savez', 'savoir', 'moi', 'demande', 'hier', 'demain', 'hui', 'soir', 'matin', 'alors']);
const WHEN = new Set(fold(WHEN_NOUNS));
const DATE = new Set(fold(DATE_NOUNS));
const WHICH = new Set(['quel', 'quelle', 'quels', 'quelles']);
/** What follows a softening « un peu »: a comparative or the object of a verb (« un peu plus fort », « monte un peu le son »). */
const SOFTENED = new Set(['plus', 'moins', 'le', 'la', 'les', 'l']);

const ALLER = '=aller';
const VENIR = '=venir';
const INFINITIVE = /(er|ir|re|oir)$/;
/** What may stand between a verb and the word it governs: pronouns, clitics, negation, a few adverbs. */
const CLITICS = new Set(['moi', 'toi', ...CLITIC_WORDS, ...SUBJECT_PRONOUNS, 'pas', 'plus', 'jamais', 'bien', 'déjà', 'encore', 'toujours', 'tout']);
const nextWord = (said: string[], i: number) => said.slice(i + 1).find((t) => !CLITICS.has(t)) ?? '';

/**
 * Whether the « combien » at `i` counts: a « de » follows it in its clause, right after it or after a verb
 * (« combien de marches », « combien j'ai de petits-enfants », « combien y a-t-il de départements »), not the
 * « de » completing a noun or before an infinitive (« combien coûte le kilo de pommes », « combien ça coûte
 * d'envoyer une lettre » ask how much).
 */
function counts(tokens: string[], boundary: Set<number>, i: number): boolean {
  for (let k = i + 1; k < tokens.length && !boundary.has(k); k++) if (/^(de|d)$/.test(tokens[k]!) && (k === i + 1 || !DETERMINERS_OF_NOUNS.has(tokens[k - 2] ?? '')) && !infinitive(tokens[k + 1] ?? '')) return true;
  return false;
}

/** Whether `word` stands in the clause of position `i`, with no comma or full stop between them. */
function sameClause(tokens: string[], boundary: Set<number>, i: number, word: string): boolean {
  const near = tokens.flatMap((t, k) => (t === word ? [k] : []));
  return near.some((k) => ![...boundary].some((b) => b > Math.min(k, i) && b <= Math.max(k, i)));
}

/** Where « passer » and « programme » only say « on air » (« il passe quoi à la télé » is « qu'est-ce qu'il y a à la télé »). */
const BROADCAST = new Set(['tele', 'television', 'radio', 'chaine', 'cinema', 'cine']);
/** Programmes: « il y a un bon western ? » is « ils passent un bon western ? », « un documentaire passe ». */
const PROGRAMMES = new Set(fold('film films western westerns documentaire documentaires émission émissions feuilleton feuilletons série séries téléfilm téléfilms'));
const ON_AIR = /^(pass|programme)/;

/** `split` is the question's words when the caller has them already (the guard splits once for all its parts). */
export function contentSignature(question: string, split: Words = words(question)): ContentSignature {
  const { said, folded: tokens } = split;
  const keys = new Set<string>();
  const contrasts = new Set<string>();
  const nounEnds: Record<string, string> = {};
  const nounGenders: Record<string, string> = {};
  let request = false;
  let how = false;
  let when = false;
  let named = false;
  let falls = false;
  const requestLemmas = new Set<string>();
  /** An impersonal « il faut », kept unless the question asks how, when or what (below). */
  const generic = new Set<string>();
  /** « je peux », « on peut », kept unless the question asks what, how, where or when (below). */
  const options = new Set<string>();
  const broadcast = tokens.some((t) => BROADCAST.has(t) || PROGRAMMES.has(t));
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]!;
    // « tu as une idée de film ? » asks as « tu me conseilles un film ? » does.
    if ((REQUESTS.has(word) || (word === 'idee' && /^(as|avez)$/.test(tokens[i - 2] ?? ''))) && (word === 'idee' || (asksWhat(tokens, i, split.boundary) && !said[i]!.endsWith('é')))) request = true;
    if (HOW.has(word)) {
      how = true;
      continue;
    }
    if (DATE.has(word) || (WHEN.has(word) && WHICH.has(tokens[i - 1] ?? ''))) {
      when = true;
      continue;
    }
    const tense = pastAt(tokens, said, i);
    if (tense) contrasts.add(tense);
    if (imperfect(word, said[i]!, afterItsSubject(tokens, i))) contrasts.add(PAST);
    if (word === 'depuis' || (word === 'fait' && /^(ca|cela)$/.test(tokens[i - 1] ?? ''))) contrasts.add(SINCE);
    if (FUTURE_FORM.test(said[i]!)) contrasts.add(FUTURE);
    if (RECALL.has(word) && REFLEXIVE.has(tokens[i - 1] ?? '')) contrasts.add(RECALLS);
    // « comment il s'appelle » asks his name: « c'est quoi son nom ».
    if (contentKey(word) === '=appeler' && /^(s|t|m|vous|nous)$/.test(tokens[i - 1] ?? '')) {
      named = true;
      keys.add('nom');
      continue;
    }
    const target = cliticTarget(tokens, i);
    if (target) contrasts.add(target);
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
      // « combien de pain ? » counts; « combien coûte le pain ? », « le pain, c'est combien ? » ask how much.
      keys.add(word === 'combien' && !counts(tokens, split.boundary, i) ? 'q:how-much' : question);
      continue;
    }
    if (/^\d/.test(word) || NUMBERS.has(word) || CALENDAR.has(word)) continue; // numbers, days and months belong to the detail guard
    const modal = MODAL_KEYS.get(word);
    if (modal === 'm:must' && plannedVisit(tokens, i)) continue;
    if (modal) {
      if (!politeFrame(tokens, i, modal)) (IMPERSONAL_MUST.has(word) && tokens[i - 1] !== 'me' && tokens[i - 1] !== 'm' && !/^(que|qu)$/.test(tokens[i + 1] ?? '') ? generic : modal === 'm:can' && /^(je|j|on|nous)$/.test(tokens[i - 1] ?? '') ? options : keys).add(modal);
      continue;
    }
    const noun = nounPosition(tokens, said, i);
    // One spelling, two words (« plu »: plaire or pleuvoir): the reading grammar gives it, or, where it
    // cannot tell, a key only the same wording shares (machines/cache/homographs.ts).
    const reading = homographReading({ tokens, said, i, noun });
    if (reading === AMBIGUOUS) {
      keys.add(`?${word}@${tokens.join('_')}`);
      continue;
    }
    if (reading !== undefined && reading !== ORDINARY) {
      keys.add(reading);
      continue;
    }
    const lemma = REQUEST_LEMMA.get(word);
    if (lemma) requestLemmas.add(lemma);
    const key = contentKey(word, noun, said[i], infinitivePosition(tokens, i));
    // The impersonal « il » is about no one: no contrast with « je » or « tu ».
    const impersonal = word === 'il' && (IMPERSONAL.has(tokens[i + 1] ?? '') || (tokens[i + 1] === 'va' && WEATHER.has(tokens[i + 2] ?? '')));
    const asked = (word === 'tu' || word === 'vous' || word === 't') && asksOnly(tokens, i);
    if (OPPOSITES.has(key) && !impersonal && !asked && (!STOPS.has(word) || LISTED.has(word))) contrasts.add(key);
    if (STOPS.has(word) || word.length < 2) continue;
    // Answer-neutral, their opposite kept: « un bon vin », « un (petit) peu plus fort », « monte un peu le son »,
    // « je me sens seule » (« je suis seule »). « un peu salé », « un peu de sel » say how much: kept.
    // « un bon vin blanc », « la bonne façon » (« le pain est bon » keeps it).
    if (key === '=bon' && ARTICLES.has(tokens[i - 1] ?? '')) continue;
    if (word === 'peu' && /^(un|petit)$/.test(tokens[i - 1] ?? '') && SOFTENED.has(tokens[i + 1] ?? '')) continue;
    if (word === 'petit' && tokens[i + 1] === 'peu' && SOFTENED.has(tokens[i + 2] ?? '')) continue;
    if (key === '=sentir' && REFLEXIVE.has(tokens[i - 1] ?? '')) continue;
    if (broadcast && ON_AIR.test(word)) continue;
    // « combien coûte l'entrée ? », « combien ça coûte ? » ask what « l'entrée, c'est combien ? » asks.
    if (/^cout/.test(word) && sameClause(tokens, split.boundary, i, 'combien')) continue;
    // « rappelle-moi quand ma sœur arrive » asks to be told again, as « dis-moi » does (« rappelle-moi demain » calls back).
    if (key === '=rappeler' && toMe(tokens, i) && QUESTIONS.has(nextWord(tokens, i))) continue;
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
    // « venir de » before an infinitive is the recent past (« la dame qui vient d'emménager » / « … qui a emménagé »), not a coming.
    if (key === VENIR && /^(de|d)$/.test(tokens[i + 1] ?? '') && INFINITIVE.test(tokens[i + 2] ?? '') && !said[i]!.endsWith('é') && !said[i]!.endsWith('u')) {
      contrasts.add(PAST);
      continue;
    }
    keys.add(key);
    if (noun && !key.startsWith('=')) {
      const one = word.length > 3 ? word.replace(/[sx]$/, '') : word;
      nounEnds[key] = mark(nounEnds[key], one.length > 3 && one.endsWith('e') ? 'e' : '-');
      const gender = determinerGender(tokens, i);
      if (gender) nounGenders[key] = mark(nounGenders[key], gender);
    }
  }
  // A request with no question word asks « what »; « la recette de », « la bonne façon de » ask « how »,
  // « la date de », « à quel moment » ask « when ».
  if (request && ![...keys].some((k) => k.startsWith('q:'))) keys.add('q:what');
  if (how || when) {
    keys.delete('q:what');
    keys.add(how ? 'q:how' : 'q:when');
  }
  if (named && keys.delete('q:how')) keys.add('q:what');
  // « comment il faut tailler les rosiers », « à quel moment il faut planter » ask what « comment on
  // taille », « quand on plante » ask: after a question word « il faut » says how one does it, not
  // that one must. « il me faut », « je dois », and a yes/no « il faut… ? » keep their obligation.
  if (![...keys].some((k) => k.startsWith('q:'))) for (const g of generic) keys.add(g);
  // « qu'est-ce que je peux faire avec des restes ? », « où je peux acheter des timbres ? », « comment je peux le
  // rassurer ? » ask for the ways, as « je fais quoi », « on trouve des timbres où », « comment le rassurer » do:
  // after « what », « how », « where », « when » (« quand est-ce que je peux semer ? » / « ça se sème quand ? »),
  // the asker's « pouvoir » asks no leave. A yes/no « je peux… ? », « combien je peux… ? », « pourquoi… ? » keep it, and so
  // does someone else's (« qu'est-ce que le chat peut manger ? » asks what is safe for it); « il faut que je », « je dois » keep their obligation.
  if (!['q:what', 'q:how', 'q:where', 'q:when'].some((q) => keys.has(q))) for (const o of options) keys.add(o);
  // Nothing asked but the request verb itself (« Que dis-tu ? », « Que sais-tu ? »): that verb is the question.
  if (requestLemmas.size > 0 && [...keys].every((k) => k.startsWith('q:'))) for (const l of requestLemmas) keys.add(l);
  // A date « tombe » (falls): only when the question asks when; « je suis tombée » is no date.
  if (falls && !keys.has('q:when')) keys.add(stem('tombe'));
  // A question with no content word at all (« tu es là ? ») proves nothing: only its own words match it.
  const key = keys.size > 0 ? [...keys].sort().join(' ') : `~${[...tokens].sort().join(' ')}`;
  return { key, contrasts: [...contrasts], nounEnds, nounGenders };
}

/** A noun's marks, each once, in a fixed order (« e- » when it is said both ways). */
const mark = (marks: string | undefined, m: string) => (marks === undefined ? m : marks.includes(m) ? marks : [...marks, m].sort().join(''));

/** Nouns both questions say after a determiner must agree on their final « e » and, where both tell it, their gender. */
function nounsAgree(a: Record<string, string>, b: Record<string, string>): boolean {
  for (const k in a) if (b[k] !== undefined && b[k] !== a[k]) return false;
  return true;
}

/**
 * Why two questions' content words disagree, or undefined when neither has a content word the other
 * lacks, no opposites sit across them, and both or neither speak of the past: « il y a eu de l'orage ? »
 * is not « il y a de l'orage ? ». The reason is a constant name (the lookup's hot path builds no string);
 * cache:evaluate --explain shows what differs under it.
 */
export function contentDisagreement(a: ContentSignature, b: ContentSignature): string | undefined {
  if (a.key !== b.key) return 'content';
  if (!nounsAgree(a.nounEnds, b.nounEnds)) return 'noun ending';
  if (!nounsAgree(a.nounGenders, b.nounGenders)) return 'noun gender';
  // A past is not a present: « c'était le 13 ? » / « c'est le 13 ? », « il a mangé ? » / « il mange ? ».
  if (a.contrasts.includes(PAST) !== b.contrasts.includes(PAST) && !tenseFree(a, b)) return 'tense: past / not past';
  for (const x of a.contrasts) {
    if (b.contrasts.includes(x)) continue;
    for (const y of OPPOSITES.get(x) ?? MARK_OPPOSITES.get(x) ?? []) if (b.contrasts.includes(y) && !a.contrasts.includes(y)) return `contrast: ${x} / ${y}`;
  }
  return undefined;
}
export const contentAgree = (a: ContentSignature, b: ContentSignature): boolean => contentDisagreement(a, b) === undefined;

/** Whether the question tells of what is to come (« il va pleuvoir », « il pleuvra »), for the guard's time check. */
export const tellsFuture = (s: ContentSignature): boolean => s.contrasts.includes(FUTURE);

/**
 * The content key of a word: its equivalence group's name when the lexicon lists it, else a noun's own
 * form or a verb's stem — and where a word stands (a noun after a determiner, an infinitive after a
 * modal or a preposition), which decides between the two. Pure: map look-ups and neighbouring words.
 */
import { CONTRASTS, EQUIVALENTS } from '../french/equivalents.ts';
import { CALENDAR_WORDS, PLURAL_SENSE_NOUNS, STOP_WORDS } from '../french/lexicon.ts';
import { stem } from '../french/stemmer.ts';
import { BEFORE_CLITIC, DETERMINERS_OF_NOUNS, PRE_ADJECTIVES } from '../french/word-classes.ts';
import { fold } from '../french/words.ts';
import { GIVE, MODAL_KEYS, REQUESTS } from './requests.ts';

export const STOPS = new Set(fold(STOP_WORDS));
/** Days and months: the detail guard compares them, whatever a stemmer would make of them (« jeudi » / « jeud »). */
export const CALENDAR = new Set(fold(CALENDAR_WORDS).flatMap((w) => [w, `${w}s`]));
const PLURAL_SENSE = new Set(fold(PLURAL_SENSE_NOUNS));

/** Every listed word to its group's name (the group's first word). */
const GROUPS = new Map<string, string>();
/** A listed verb's infinitive without its ending (« dormir » → « dorm »): the stem its unlisted forms prove (« dormez »). */
export const INFINITIVE_STEMS = new Map<string, string>();
const INFINITIVE_ENDING = /(er|ir|re|oir)$/;
for (const group of EQUIVALENTS) {
  const members = fold(group);
  const name = `=${members[0]!}`;
  for (const w of members) GROUPS.set(w, name);
  for (const w of members) if (INFINITIVE_ENDING.test(w) && w.length > 4 && !INFINITIVE_STEMS.has(w.replace(INFINITIVE_ENDING, ''))) INFINITIVE_STEMS.set(w.replace(INFINITIVE_ENDING, ''), name);
}

/**
 * A listed word's inflection the lexicon did not write out, that it can prove: a plural (« fatigués »
 * of « fatigué ») or the feminine of a participle (« partie » of « parti », « venues » of « venu »).
 * Never a stem shared by accident: « boite » is no « boit », « prise » no « pris », « Paris » no « pars ».
 */
function listedInflection(word: string): string | undefined {
  if (/[sx]$/.test(word)) {
    const one = GROUPS.get(word.slice(0, -1));
    if (one) return one;
    word = word.slice(0, -1);
  }
  return /[eiu]e$/.test(word) ? GROUPS.get(word.slice(0, -1)) : undefined;
}

/**
 * The key a word is matched by: its group's name when the lexicon lists it (or proves it one of a
 * listed word's inflections); else a noun (after a determiner, « quel » or a preposition: « le boucher »,
 * « la bouche », « quelle heure », « sans sucre ») keeps its own form but for its plural and a final
 * « e » (which, with its determiner's gender, still counts: ContentSignature.nounEnds); else a verb's stem, joined to a listed
 * verb only through that verb's infinitive (« dormez » → « dormir »).
 */
export function contentKey(word: string, noun = false, said = word, infinitive = true): string {
  const listed = GROUPS.get(word) ?? listedInflection(word);
  if (listed) return listed;
  // « les pâtes » are no « pâte »: such a plural keeps its « s » (« comptes », « règles » are verbs too, so a noun's place only).
  if (noun && PLURAL_SENSE.has(word)) return word;
  if (noun) {
    // The plural and a final « e » only, as a verb's stem would (« de Pâques » / « quand Pâques »); a
    // final « é » is kept apart (« du pâté » / « des pâtes »).
    const one = word.length > 3 ? word.replace(/[sx]$/, '') : word;
    return `${one.length > 3 ? one.replace(/e$/, '') : one}${/ée?s?$/.test(said) ? 'é' : ''}`;
  }
  const s = stem(word, infinitive);
  return INFINITIVE_STEMS.get(s) ?? s;
}

/** Where an infinitive stands: after a modal, « aller », « faut », a preposition, a clitic or another verb (« il faut ranger », « pour la ranger »). */
const BEFORE_INFINITIVE = new Set(['pour', 'de', 'd', 'a', 'sans', 'comment', 'me', 'm', 'te', 't', 'se', 's', 'le', 'la', 'les', 'l', 'lui', 'y', 'nous', 'vous', 'faut', 'faudra', 'faudrait', 'fallait']);
export function infinitivePosition(tokens: string[], i: number): boolean {
  const before = tokens[i - 1] ?? '';
  // « faut-il arroser », « peux-tu venir »: the modal before its inverted subject.
  const inverted = MODAL_KEYS.has(tokens[i - 2] ?? '') && /^(il|je|tu|on|vous|nous)$/.test(before);
  return i === 0 || inverted || BEFORE_INFINITIVE.has(before) || MODAL_KEYS.has(before) || GROUPS.get(before) === '=aller' || REQUESTS.has(before) || GIVE.has(before) || /(er|ir|re)$/.test(before) || /(e|es|ent|ons|ez|ais|ait)$/.test(before) && !DETERMINERS_OF_NOUNS.has(before) && GROUPS.has(before);
}

/** An infinitive's form: « -er », « -ir », « -oir », and the « -re » verbs (« l'heure », « une lettre » are nouns). */
const RE_INFINITIVES = new Set(fold('faire dire lire écrire prendre mettre boire attendre entendre vendre rendre descendre perdre répondre croire plaire rire cuire conduire connaître naître peindre éteindre coudre suivre vivre battre permettre promettre apprendre comprendre reprendre traduire construire détruire inscrire décrire'));
export const infinitive = (word: string) => /(er|ir|oir)$/.test(word) || RE_INFINITIVES.has(word);

const PREPOSITIONS_OF_NOUNS = new Set(['sans', 'avec', 'en', 'par', 'pour', 'chez', 'sur', 'sous', 'quel', 'quelle', 'quels', 'quelles', 'a']);
export function nounPosition(tokens: string[], said: string[], i: number): boolean {
  // « a déposé » has; « à Lyon » is a preposition.
  const before = said[i - 1] === 'a' ? 'has' : (tokens[i - 1] ?? '');
  if (PRE_ADJECTIVES.has(before) && DETERMINERS_OF_NOUNS.has(tokens[i - 2] ?? '')) return true;
  // « pour ranger », « sans manger », « de ranger », « à planter »: an infinitive after a preposition.
  // « en hiver »: no infinitive after « en »; « j'en bois », « il y en a »: that « en » is a pronoun.
  if (before === 'en') return !BEFORE_CLITIC.has(tokens[i - 2] ?? '') && tokens[i - 2] !== 'y';
  if (PREPOSITIONS_OF_NOUNS.has(before) || before === 'de' || before === 'd') return !infinitive(tokens[i]!);
  if (!DETERMINERS_OF_NOUNS.has(before)) return false;
  // « arrêté de la fabriquer », « pour le rassurer »: after a preposition, « le », « la », « les » before an infinitive are its object.
  // After a modal too (« je peux la réchauffer »); « a » is « à » only as said (« il y a le poissonnier » has a noun).
  if (/^(le|la|les)$/.test(before) && (/^(de|d|à|pour|sans)$/.test(said[i - 2] ?? '') || MODAL_KEYS.has(tokens[i - 2] ?? '')) && infinitive(tokens[i]!)) return false;
  // « je la range »: a clitic, not an article.
  return !(/^(le|la|les|l)$/.test(before) && BEFORE_CLITIC.has(tokens[i - 2] ?? ''));
}

/** Each listed word's key to the keys of its opposites (« =chaud » ↔ « =froid »). */
export const OPPOSITES = new Map<string, Set<string>>();
/** The words the lexicon lists: a stop word has a contrast only as itself (« sur »), never by its stem (« peux » is no « peu »). */
export const LISTED = new Set([...EQUIVALENTS, ...CONTRASTS.flat()].flatMap(fold));
for (const [a, b] of CONTRASTS) {
  const [ka, kb] = [contentKey(fold(a)[0]!), contentKey(fold(b)[0]!)];
  OPPOSITES.set(ka, (OPPOSITES.get(ka) ?? new Set()).add(kb));
  OPPOSITES.set(kb, (OPPOSITES.get(kb) ?? new Set()).add(ka));
}

/**
 * Who does what to whom. « Ma fille a appelé le docteur ? » and « Le docteur a appelé ma fille ? »
 * share every word, so the content and detail guards agree; the roles of the people in them do
 * not. Each person the question names — kin and roles (« ma fille », « le facteur »), names
 * (« Claire »), the senior (« je », « me ») and the one asked (« tu », « te ») — gets a role: subject
 * or object (« m'a appelé », « a appelé ma fille », « a écrit à Paul »). Word order decides, as French
 * does, clause by clause (commas, « si », « que » open a clause): a person before the clause's verb
 * is its subject, after it its object — unless the verb was inverted after a question word (« Quand
 * vient ma fille ? », « … que faisait ma mère »), a « qui » follows (« c'est ma sœur qui… »), « être »
 * has no object (« il est passé le facteur »), or « par » names the agent. Pure and cheap: one pass.
 */
import { EQUIVALENTS } from '../french/equivalents.ts';
import { CALENDAR_WORDS, MODAL_VERBS, QUESTION_WORDS, STOP_WORDS } from '../french/lexicon.ts';
import { AVOIR_USUAL, CLITICS, CONTRACTED_ARTICLES, DEMONSTRATIVES, DETERMINERS, ETRE_USUAL, INDEFINITE_ARTICLES, INTERROGATIVE_DETERMINERS, NOUN_ONLY_POSSESSIVES, PRE_ADJECTIVES, SUBJECT_PRONOUNS as SUBJECT_WORDS } from '../french/word-classes.ts';
import { fold, words, type Words } from '../french/words.ts';
import { KIN, KIN_SAME } from './question-details.ts';

/** People named by what they do, who can call, visit or be waited for as kin can. */
const ROLES = fold('facteur factrice plombier livreur livreuse électricien coiffeur coiffeuse jardinier notaire maire curé prêtre boulanger boulangère épicier vendeur vendeuse chauffeur policier gendarme pompier patron patronne');
const PEOPLE = new Map<string, string>([...KIN.map((k) => [k, KIN_SAME[k] ?? k] as const), ...ROLES.map((r) => [r, r] as const)]);
const LONGEST = Math.max(...[...PEOPLE.keys()].map((k) => k.split(' ').length));

const TITLES = new Set(['monsieur', 'madame', 'mademoiselle', 'maitre']);
/** A polite frame after « tu »: « tu peux », « tu pourrais », « tu veux bien ». */
const POLITE = /^(peux|pourrais|veux bien|voudrais bien)\b/;
const NOUN_BEFORE = new Set([...INDEFINITE_ARTICLES, ...CONTRACTED_ARTICLES, ...NOUN_ONLY_POSSESSIVES, ...DEMONSTRATIVES, ...INTERROGATIVE_DETERMINERS]);
/** « à ma fille » is told or given something, as « ma fille » after a verb is: both objects (as said: « a » has, « à » is to). */
const TO = new Set(['à', 'au', 'aux', 'pour']);
/** A person after these is a possessor, a companion or a place (« le bébé de ma fille », « avec moi »): no one who can swap. */
const OTHER_PREPOSITIONS = new Set(['de', 'd', 'du', 'des', 'en', 'avec', 'chez', 'sans', 'sur', 'contre', 'vers', 'apres', 'avant', 'entre', 'comme', 'sous']);
const SUBJECT_PRONOUNS: ReadonlySet<string> = new Set(SUBJECT_WORDS);
const OBJECT_CLITICS: ReadonlySet<string> = new Set(CLITICS);
const AUXILIARIES = new Set([...AVOIR_USUAL, 'eu', 'va', 'vais', 'vas', 'vont', 'allait', ...ETRE_USUAL]);
const MODALS = new Set(Object.values(MODAL_VERBS).flatMap(fold));
/** Listed verb forms (a group named by an infinitive): « appelé », « vient », « attend ». */
const VERB_FORMS = new Set(EQUIVALENTS.map(fold).filter((g) => /(er|ir|re|oir)$/.test(g[0]!)).flat());
/** Verbs that only ask (« tu sais si… », « je voudrais savoir… », « tu peux me dire… »): no one's action, and a clause opens after them. */
const ASKING = new Set(fold('dire dis dites raconte racontes racontez raconter lire lis lisez donne donnes donnez donner explique expliques expliquez expliquer montre montres montrez montrer chanter chante chantes conseilles conseillez conseiller proposes proposez rappeler rappelle rappelles rappelez sais savez savoir connais connaissez souviens souvenez crois penses'));
/** Motion before an infinitive: « passe me voir », « vient me chercher » — the senior is visited, no swap. */
const MOTION = new Set(fold('venir viens vient venez passe passes passez passer aller va vas allez viendra'));
const SUBORDINATORS = new Set(['si', 'que', 'qu', 'parce', 'lorsque', 'puisque']);
const ADVERBS = new Set(fold('encore toujours déjà bien bientôt maintenant aujourd hui hier demain enfin vraiment ne n pas plus jamais là ici partout'));
const QUESTIONS = new Set(Object.keys(QUESTION_WORDS).map((w) => fold(w)[0]!));
/** Capitalised words that are no one: days, feasts, and every stop word that may open a sentence (« Que dis-tu ? »). */
const NOT_NAMES = new Set([...fold(`${CALENDAR_WORDS} noël pâques dieu hier demain aujourd hui ce soir matin`), ...fold(STOP_WORDS)]);

interface Person {
  id: string;
  role: 'subj' | 'obj';
  kind: 'named' | 'name' | 'self' | 'you' | 'them';
}

/** The question's people with their roles, sorted (« obj:fille », « subj:self »); empty when no one can swap. */
export function questionRoles(question: string, split: Words = words(question)): string[] {
  const { said, folded: t, capital, boundary } = split;
  // « est-ce que » makes a question: its « est » is no verb.
  const skip = new Set<number>();
  for (let i = 0; i < t.length; i++) if (t[i] === 'est' && t[i + 1] === 'ce' && /^qu/.test(t[i + 2] ?? '')) [i, i + 1, i + 2].forEach((k) => skip.add(k));
  // After a determiner or « quel » a word is a noun, whatever its ending (« en quelle année », « la journée »).
  const verb = (i: number) =>
    i < t.length && !skip.has(i) && !NOUN_BEFORE.has(t[i - 1] ?? '') && (AUXILIARIES.has(said[i]!) || MODALS.has(t[i]!) || VERB_FORMS.has(t[i]!) || ASKING.has(t[i]!) || /é(e)?s?$/.test(said[i]!) || afterSubject(t, i));
  /** Where the clause holding `i` starts: after punctuation, a subordinator or a verb that only asks. */
  const clauseStart = (i: number) => {
    for (let k = i; k > 0; k--) if (boundary.has(k) || (!skip.has(k - 1) && (SUBORDINATORS.has(t[k - 1]!) || ASKING.has(t[k - 1]!)))) return k;
    return 0;
  };
  const people: Person[] = [];
  for (let i = 0; i < t.length; i++) {
    const person = personAt(t, capital, boundary, i, verb);
    if (person) {
      const role = roleAt(t, said, i, verb, clauseStart(i));
      if (role) people.push({ id: person.id, role, kind: person.kind });
      i += person.length - 1;
      continue;
    }
    const w = t[i]!;
    if ((w === 'je' || w === 'j') && !asks(t, i)) people.push({ id: 'self', role: 'subj', kind: 'self' });
    else if ((w === 'me' || w === 'm') && !/^(je|j)$/.test(t[i - 1] ?? '') && !asks(t, i) && !MOTION.has(t[i - 1] ?? '')) people.push({ id: 'self', role: 'obj', kind: 'self' });
    // « tu peux envoyer une photo à mon fils ? » asks what « envoie une photo à mon fils » asks: the one asked does it, unsaid in the imperative.
    else if (w === 'tu' && !asks(t, i) && !POLITE.test(`${t[i + 1] ?? ''} ${t[i + 2] ?? ''}`)) people.push({ id: 'you', role: 'subj', kind: 'you' });
    // « a-t-il » has a « t » of sound only; « tu te » is reflexive.
    else if ((w === 'te' || (w === 't' && !/^(il|elle|on)$/.test(t[i + 1] ?? ''))) && t[i - 1] !== 'tu' && !asks(t, i)) people.push({ id: 'you', role: 'obj', kind: 'you' });
    else if (w === 'lui' && verb(i + 1)) people.push({ id: 'them', role: 'obj', kind: 'them' });
    else if (/^(il|elle|on|ils|elles)$/.test(w) && !impersonal(t, i)) people.push({ id: 'them', role: 'subj', kind: 'them' });
  }
  // « il », « elle », « on » as subjects name no one of their own, unless they act on the senior or the one asked (« on m'a appelée »).
  const acted = people.some((p) => p.role === 'obj' && (p.kind === 'self' || p.kind === 'you'));
  const kept = people.filter((p) => p.kind !== 'them' || p.role === 'obj' || acted);
  if (!kept.some((p) => p.kind !== 'self' && p.kind !== 'you')) return []; // the senior alone: « ça me fait mal » is « j'ai mal »
  if (kept.length < 2 && (kept[0]!.role === 'subj' || kept[0]!.kind === 'name')) return [];
  return [...new Set(kept.map((p) => `${p.role}:${p.id}`))].sort();
}

/** A word after a subject pronoun (and its clitics) is the verb: « j'invite », « il me garde ». */
function afterSubject(t: string[], i: number): boolean {
  let j = i - 1;
  while (j >= 0 && OBJECT_CLITICS.has(t[j]!) && !SUBJECT_PRONOUNS.has(t[j]!)) j -= 1;
  return j >= 0 && SUBJECT_PRONOUNS.has(t[j]!) && !OBJECT_CLITICS.has(t[i]!);
}

/** Whether the pronoun at `i` only frames a request (« tu peux me dire », « je voudrais savoir », « tu me lis »). */
function asks(t: string[], i: number): boolean {
  let j = i + 1;
  while (j < t.length && (OBJECT_CLITICS.has(t[j]!) || MODALS.has(t[j]!) || t[j] === 'bien' || t[j] === 'tu' || t[j] === 'ne' || t[j] === 'pas' || t[j] === 'plus')) j += 1;
  return ASKING.has(t[j] ?? '');
}

const IMPERSONAL_AFTER = new Set(['faut', 'faudra', 'faudrait', 'fallait', 'y', 'fait', 'fera', 'faisait', 'pleut', 'pleuvra', 'neige', 'neigera', 'semble', 'parait', 'reste', 'vaut']);
const impersonal = (t: string[], i: number) => t[i] === 'il' && (IMPERSONAL_AFTER.has(t[i + 1] ?? '') || (t[i + 1] === 'va' && /^(faire|pleuvoir|neiger|y)$/.test(t[i + 2] ?? '')) || t[i - 1] === 's');

/** The person named at `i` (kin, a role, or a name), and how many words name it. */
function personAt(t: string[], capital: boolean[], boundary: Set<number>, i: number, verb: (i: number) => boolean): { id: string; kind: Person['kind']; length: number } | null {
  const nameFrom = (k: number) => {
    let n = 0;
    while (capital[k + n] && !NOT_NAMES.has(t[k + n]!) && !DETERMINERS.has(t[k + n]!) && (n === 0 || !boundary.has(k + n))) n += 1;
    return n;
  };
  // A capital on kin past the first word makes it a title (« le Notre Père », « le Père Noël »), no one at home.
  if (!(capital[i] && i > 0)) {
    for (let n = LONGEST; n >= 1; n--) {
      const id = PEOPLE.get(t.slice(i, i + n).join(' '));
      // « ma voisine Josette »: the name after it is the same person.
      if (id) return { id, kind: 'named', length: n + nameFrom(i + n) };
    }
  }
  const w = t[i]!;
  if (!capital[i] || w.length < 2 || NOT_NAMES.has(w) || QUESTIONS.has(w) || SUBJECT_PRONOUNS.has(w) || DETERMINERS.has(w) || OBJECT_CLITICS.has(w) || TITLES.has(w)) return null;
  // A capital opens every sentence and every title (« La Vie en rose »): a name is one after a title,
  // before a verb (« Claire a appelé »), or right after a verb or « à » (« a appelé Pierre », « à Jeanne »).
  const before = t[i - 1] ?? '';
  if (!(TITLES.has(before) || verb(i + nameFrom(i)) || (i > 0 && (verb(i - 1) || before === 'a')))) return null;
  const length = nameFrom(i);
  return { id: t.slice(i, i + length).join(' '), kind: 'name', length };
}

function roleAt(t: string[], said: string[], i: number, verb: (i: number) => boolean, start: number): Person['role'] | null {
  let j = i - 1;
  while (j >= start && (DETERMINERS.has(t[j]!) || TITLES.has(t[j]!)) && !TO.has(said[j]!)) j -= 1;
  if (j >= start && TO.has(said[j]!)) return 'obj';
  if (j >= start && t[j] === 'par') return 'subj';
  if (j >= start && OTHER_PREPOSITIONS.has(t[j]!)) return null;
  let first = -1;
  for (let k = start; k < i && first === -1; k++) if (verb(k)) first = k;
  if (first === -1) return 'subj';
  // « c'est ma sœur qui a invité… »: a « qui » right after the person makes it the subject.
  if (t[i + 1] === 'qui' || t[i + 2] === 'qui') return 'subj';
  const between = t.slice(first, i).filter((w) => !DETERMINERS.has(w) && !TITLES.has(w));
  if (between.some((w) => SUBJECT_PRONOUNS.has(w) && w !== 'il' && w !== 'elle' && w !== 'ils' && w !== 'elles')) return 'obj';
  // « être » takes no object: « il est passé, le facteur », « elle est partie ma fille », « qui est ta voisine ».
  const etre = ETRE_USUAL.has(said[first]!) && said.slice(first + 1, i).every((w, k) => ADVERBS.has(t[first + 1 + k]!) || DETERMINERS.has(t[first + 1 + k]!) || /(é|ée|és|ées|i|ie|is|u|ue|us)$/.test(w));
  if (etre) return 'subj';
  if (between.some((w) => SUBJECT_PRONOUNS.has(w))) return 'obj';
  // « Quand vient ma fille ? », « Quel âge aurait eu mon père ? », « … que faisait ma mère »: the verb inverted.
  const opening = t.slice(start, first).filter((_, k) => !(skipWord(t, start + k)));
  const asked = opening.length > 0 && (QUESTIONS.has(opening[0]!) || (opening[0] === 'a' && QUESTIONS.has(opening[1] ?? ''))) && !opening.includes('qui') && !opening.includes('quoi');
  const relative = opening.length === 0 && start > 0 && /^(que|qu)$/.test(t[start - 1]!);
  return asked || relative ? 'subj' : 'obj';
}

const skipWord = (t: string[], k: number) => (t[k] === 'est' && t[k + 1] === 'ce') || (t[k] === 'ce' && t[k - 1] === 'est') || (/^qu/.test(t[k]!) && t[k - 1] === 'ce' && t[k - 2] === 'est');

/**
 * Who did what to what, for any nouns — things, animals, places, teams as well as people: « la France a
 * battu le Brésil » is not « le Brésil a battu la France », nor « le chat a griffé le chien » « le chien
 * a griffé le chat ». Two nouns on either side of a verb, in one clause with no preposition between, are
 * its doer and its undergoer, « doer>undergoer »; a passive (« a été battu par ») turns them round.
 * A noun after « à » (or « pour », « après », « sur »… : UNDERGOER_PREPOSITIONS) takes the undergoer's place,
 * as « à ma fille » does for people (« le chat a fait peur au chien »), and after a thing undergone it is the
 * doer's too (« le chat a donné la balle au chien »).
 * A noun phrase is its head and its « de » complement (« la gamelle du chien », « le chien de mon fils »):
 * the head does or undergoes, and the links are kept (« gamelle<chien ») for phrasesAgree.
 * The copula « être » alone orders nothing (« Paris est la capitale » / « la capitale est Paris »); with a
 * place it puts the first noun in the second (« la boîte est dans le carton », « … sous la table »).
 * Two questions disagree only when one orders a pair the other orders the other way (ordersAgree).
 */
const NOUN_DETERMINERS = new Set([...DETERMINERS].filter((d) => d !== 'au' && d !== 'aux'));
/** What may stand between the two nouns beside the verb: clitics, negation, adverbs, « qui ». */
const BESIDE_VERB = new Set([...OBJECT_CLITICS, ...ADVERBS, 'qui', 'pas', 'plus', 'jamais']);
const BREAKS = new Set([...SUBORDINATORS, ...OTHER_PREPOSITIONS, ...TO, 'et', 'ou', 'mais', 'dans', 'par', 'pour', 'quand', 'comment', 'pourquoi', 'ouwh']);
const FOLDED_ETRE = new Set(fold([...ETRE_USUAL].join(' ')));
/**
 * After these a noun undergoes what the clause's doer does, as after « à »: given or done for (« pour le
 * chien », as « pour » is for people), chased, sat on, walked behind (« court après le chien », « saute sur le
 * chat »). Not « avec », « contre », « entre », whose two sides are the same (« a joué contre le Brésil »).
 */
const UNDERGOER_PREPOSITIONS = new Set(['à', 'pour', 'après', 'sur', 'sous', 'derrière', 'devant', 'vers', 'chez']);
/** Where « être » puts a thing: « dans le frigo » (« chez », « sous »… are UNDERGOER_PREPOSITIONS). */
const IN = new Set(['dans']);
/** « du chien », « des voisins » straight after a noun, or « de » / « d' » before one: a complement. */
const OF = new Set(['de', 'd']);
const CONTRACTED_OF = new Set(['du', 'des']);

export interface NounStructure {
  /** Nouns around a verb, doer first: « france>bresil ». */
  order: string[];
  /** The pairs of `order` whose undergoer follows « à », « pour », « sur »…: « chien>voisin » in « le chien aboie sur le voisin ». */
  toward: string[];
  /** Each noun phrase's head and its « de » complement: « gamelle<chien ». */
  phrases: string[];
  /** Every noun's key, for phrasesAgree: a link only counts against a question naming both nouns. */
  nouns: string[];
}

interface Noun {
  at: number;
  from: number;
  key: string;
  /** After « à », « au », « aux »: an undergoer, never a doer. */
  to: boolean;
  /** The noun this one completes (« du chien » after « la gamelle »), by index in the list. */
  of?: number;
}

export function nounOrder(question: string, split: Words = words(question)): string[] {
  return nounStructure(question, split).order;
}

export function nounStructure(question: string, split: Words = words(question)): NounStructure {
  const { said, folded: t, capital, boundary } = split;
  // The nouns: after a determiner (an adjective between allowed), or a capitalised word past the first.
  const nouns: Noun[] = [];
  for (let i = 0; i < t.length; i++) {
    const w = t[i]!;
    // « au chien », « aux voisins », « à la voisine », « pour le chien », « après le chat » (as said: the folded « a » is also « has », « sur » also « sûr »).
    const to = said[i] === 'au' || said[i] === 'aux' || (UNDERGOER_PREPOSITIONS.has(said[i]!) && NOUN_DETERMINERS.has(t[i + 1] ?? '') && !boundary.has(i + 1));
    const after = to && UNDERGOER_PREPOSITIONS.has(said[i]!) ? i + 1 : i;
    if (to || (NOUN_DETERMINERS.has(w) && !(/^(le|la|les|l)$/.test(w) && (SUBJECT_PRONOUNS.has(t[i - 1] ?? '') || OBJECT_CLITICS.has(t[i - 1] ?? '')) && i > 0))) {
      let n = after + 1;
      if (PRE_ADJECTIVES.has(t[n] ?? '')) n += 1;
      const noun = t[n];
      if (noun !== undefined && !STOP_WORDS_SET.has(noun) && !boundary.has(n)) {
        nouns.push({ at: n, from: i, key: stemNoun(noun), to });
        i = n;
      }
    } else if (capital[i] && i > 0 && !boundary.has(i) && !NOT_NAMES.has(w) && !QUESTIONS.has(w) && w.length > 1) {
      // « chez Lucie », « à Paul »: a name after such a preposition undergoes, as a noun does.
      const after = UNDERGOER_PREPOSITIONS.has(said[i - 1]!);
      nouns.push({ at: i, from: after ? i - 1 : i, key: w, to: after });
    }
  }
  const phrases: string[] = [];
  for (let k = 1; k < nouns.length; k++) {
    const a = nouns[k - 1]!;
    const b = nouns[k]!;
    const between = t.slice(a.at + 1, b.from);
    const linked = (between.length === 0 && CONTRACTED_OF.has(t[b.from]!)) || (between.length === 1 && OF.has(between[0]!));
    if (linked && !b.to && !boundary.has(b.from) && a.key !== b.key) {
      b.of = k - 1;
      phrases.push(`${a.key}<${b.key}`);
    }
  }
  /** A phrase's head: « le chien de mon fils » does what « le chien » does. */
  const head = (k: number): number => (nouns[k]!.of === undefined ? k : head(nouns[k]!.of!));
  const order: string[] = [];
  const toward: string[] = [];
  /** Each undergoer's doer, by index: « la balle » in « le chat a donné la balle » is the chat's. */
  const doers = new Map<number, number>();
  for (let k = 0; k + 1 < nouns.length; k++) {
    const b = nouns[k + 1]!;
    if (b.of !== undefined) continue;
    const a = nouns[k]!;
    const between = t.slice(a.at + 1, b.from);
    if ([...Array(Math.max(0, b.from - a.at)).keys()].some((d) => boundary.has(a.at + 1 + d))) continue;
    // « … a donné la balle au chien »: the thing's doer gives to the noun after « à » too.
    if (between.length === 0 && b.to && doers.has(k)) {
      const doer = nouns[doers.get(k)!]!;
      if (doer.key !== b.key) order.push(`${doer.key}>${b.key}`);
      if (doer.key !== b.key) toward.push(`${doer.key}>${b.key}`);
      continue;
    }
    const first = nouns[head(k)]!;
    if (between.length === 0 || first.key === b.key || first.to) continue;
    const passive = between.at(-1) === 'par';
    // « le lait est dans le frigo »: « être » and a place put the first noun in the second.
    const inside = !passive && IN.has(between.at(-1)!);
    const verbs = (passive || inside ? between.slice(0, -1) : between).filter((w) => !BESIDE_VERB.has(w) || AUXILIARIES.has(w));
    if (verbs.length === 0 || verbs.length > 3 || verbs.some((w) => BREAKS.has(w))) continue;
    // « être » with nothing but an adjective or itself: a copula, no doer — unless a place follows (« est sous la table »).
    if (!passive && verbs.every((w) => FOLDED_ETRE.has(w)) && !inside && !b.to) continue;
    // « avoir » alone, no participle after it, has: « mes tomates ont des taches » is « des taches sur mes tomates », no doer.
    if (!passive && !inside && verbs.every((w) => AVOIR_USUAL.has(w))) continue;
    if (inside && !verbs.every((w) => FOLDED_ETRE.has(w))) continue;
    if (passive && !verbs.some((w) => FOLDED_ETRE.has(w) || w === 'ete')) continue;
    if (b.to && passive) continue;
    if (!passive) doers.set(k + 1, head(k));
    order.push(passive ? `${b.key}>${first.key}` : `${first.key}>${b.key}`);
    if (b.to) toward.push(`${first.key}>${b.key}`);
  }
  return { order, toward, phrases, nouns: [...new Set(nouns.map((n) => n.key))] };
}
const STOP_WORDS_SET = new Set(fold(STOP_WORDS));
/** A noun's plural is the same noun (« les chats » / « le chat »). */
const stemNoun = (w: string) => (w.length > 3 ? w.replace(/[sx]$/, '') : w);

/** False when one question orders two nouns one way and the other the other way. */
export function ordersAgree(a: readonly string[], b: readonly string[]): boolean {
  return !a.some((pair) => b.includes(pair.split('>').reverse().join('>')));
}

/**
 * False when a noun phrase of one question is another's in the other: a head completed by a noun the
 * other question also names, but not in that phrase (« la gamelle du chien » / « la gamelle du chat »),
 * or the two turned round (« la fille de ma sœur » / « la sœur de ma fille »). A link the other question
 * does not contradict (« la lumière du salon » / « la lumière dans le salon ») agrees.
 */
export function phrasesAgree(a: Pick<NounStructure, 'phrases' | 'nouns' | 'toward'>, b: Pick<NounStructure, 'phrases' | 'nouns' | 'toward'>): boolean {
  const contradicts = (x: typeof a, y: typeof b): boolean =>
    y.phrases.some((link) => {
      const [h, c] = link.split('<') as [string, string];
      // « le chien du voisin » is no « le chien aboie sur le voisin »: there one does something toward the other.
      return x.phrases.includes(`${c}<${h}`) || x.toward.includes(`${h}>${c}`) || x.toward.includes(`${c}>${h}`) || (x.nouns.includes(h) && x.nouns.includes(c) && !x.phrases.includes(link) && x.phrases.some((l) => l.startsWith(`${h}<`) || l.endsWith(`<${c}`)));
    });
  return !contradicts(a, b) && !contradicts(b, a);
}

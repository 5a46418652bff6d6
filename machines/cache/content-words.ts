/**
 * The content-word guard: two questions may share a cached answer only if every content word
 * (noun, adjective, verb, question word — after French stop words and a light stemmer) of one is
 * matched in the other by the same stem or a listed equivalent, and no pair of opposites
 * (« chaud » / « froid », « allumer » / « éteindre ») sits across them. Embeddings score « histoire
 * drôle » and « histoire triste », « mal au dos » and « mal au ventre » as near-identical; this
 * guard proves equivalence instead of guessing it, so a paraphrase it cannot prove is a miss
 * (one model call), never a false hit. Pure and cheap: one pass of regexes and map look-ups.
 */
import { CALENDAR_WORDS, CONTRASTS, DATE_NOUNS, EQUIVALENTS, HOW_NOUNS, MODAL_VERBS, PLURAL_SENSE_NOUNS, QUESTION_WORDS, REQUEST_LEMMAS, REQUEST_VERBS, STOP_WORDS, WHEN_NOUNS } from './french-lexicon.ts';
import { AMBIGUOUS, determinerGender, homographReading, ORDINARY } from './homographs.ts';
import { NUMBER_WORDS } from './question-details.ts';

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

/**
 * The question's words as said (lower case, accents kept: « à » is not « a », « déménagé » is a
 * participle) and folded (accents off: what the lexicon is matched against). Elisions and
 * hyphens split words: « l'hôpital » → « l », « hôpital »; « dis-moi » → « dis », « moi ».
 */
export interface Words {
  said: string[];
  folded: string[];
  capital: boolean[];
  boundary: Set<number>;
}
export function words(text: string): Words {
  const said: string[] = [];
  // What lower case loses: capitals (names: « Claire ») and punctuation (where a clause ends).
  const capital: boolean[] = [];
  const boundary = new Set<number>();
  const raw = text
    .normalize('NFC')
    .replace(/[’'`\-]/g, ' ')
    .replace(/[,;:.?!…]/g, ' \u0001 ')
    .replace(/[^\p{L}\p{N}\s\u0001]/gu, ' ')
    .split(/\s+/);
  for (const r of raw) {
    if (r === '') continue;
    if (r === '\u0001') {
      boundary.add(said.length);
      continue;
    }
    const lower = r.toLowerCase();
    capital.push(r[0] !== lower[0]);
    said.push(lower.includes('œ') || lower.includes('æ') ? lower.replace(/œ/g, 'oe').replace(/æ/g, 'ae') : lower);
  }
  // « où » (where) would fold to « ou » (or).
  const folded = said.map((w) => (w === 'où' ? 'ouwh' : /[^a-z0-9]/.test(w) ? w.normalize('NFD').replace(/\p{Diacritic}/gu, '') : w));
  return { said, folded, capital, boundary };
}
const fold = (list: string) => words(list).folded;

/**
 * A light French stemmer for verbs the lexicon does not list: plural, feminine and the common verb
 * endings, one suffix at most, never below three letters (« arroser » / « arrose » / « arrosé »).
 * It never joins a word with a listed one (see contentKey), and a noun keeps its own form.
 */
const SUFFIXES: ReadonlyArray<readonly [string, number]> = [
  ['issions', 3], ['issiez', 3], ['issent', 3], ['issons', 3], ['issez', 3], ['issait', 3], ['issais', 3],
  ['eraient', 3], ['erions', 3], ['eriez', 3], ['erait', 3], ['erais', 3], ['erons', 3], ['eront', 3], ['erai', 3], ['eras', 3], ['era', 3], ['erez', 3],
  ['aient', 3], ['ions', 3], ['iez', 3], ['ait', 3], ['ais', 3], ['ant', 4], ['ent', 4], ['ons', 3], ['ez', 3], ['er', 3], ['ir', 3], ['ee', 3], ['ie', 3], ['e', 3], ['i', 3],
];
export function stem(word: string, infinitive = true): string {
  // « -yer » verbs write « i » before a silent « e »: « envoie », « nettoient », « essuie » are « envoy- », « nettoy- », « essuy- ».
  let w = word.length > 4 ? word.replace(/([aou])i(e|es|ent)$/, '$1y$2') : word;
  if (w.length <= 3) return w;
  if (w.endsWith('eaux')) w = w.slice(0, -1);
  else if (w.endsWith('aux')) w = `${w.slice(0, -3)}al`;
  else if (/[sx]$/.test(w)) w = w.slice(0, -1);
  for (const [suffix, keep] of SUFFIXES) {
    // « -er », « -ir » end an infinitive only where one stands; elsewhere a noun (« en hiver », « le plaisir »).
    if ((suffix === 'er' || suffix === 'ir') && !infinitive) continue;
    if (w.endsWith(suffix) && w.length - suffix.length >= keep) return w.slice(0, -suffix.length);
  }
  return w;
}

const STOPS = new Set(fold(STOP_WORDS));
/** Days and months: the detail guard compares them, whatever a stemmer would make of them (« jeudi » / « jeud »). */
const CALENDAR = new Set(fold(CALENDAR_WORDS).flatMap((w) => [w, `${w}s`]));
const PLURAL_SENSE = new Set(fold(PLURAL_SENSE_NOUNS));
const NUMBERS = new Set(Object.keys(NUMBER_WORDS));
const QUESTIONS = new Map(Object.entries(QUESTION_WORDS).map(([w, key]) => [fold(w)[0]!, key]));

/** Every listed word to its group's name (the group's first word). */
const GROUPS = new Map<string, string>();
/** A listed verb's infinitive without its ending (« dormir » → « dorm »): the stem its unlisted forms prove (« dormez »). */
const INFINITIVE_STEMS = new Map<string, string>();
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

/** Determiners: the word after one is a noun (or an adjective before it), never a verb to stem. */
const DETERMINERS_OF_NOUNS = new Set(['le', 'la', 'les', 'l', 'un', 'une', 'des', 'du', 'au', 'aux', 'ce', 'cet', 'cette', 'ces', 'mon', 'ma', 'mes', 'ton', 'ta', 'tes', 'son', 'sa', 'ses', 'notre', 'nos', 'votre', 'vos', 'leurs', 'quelques', 'plusieurs', 'chaque', 'de', 'd']);
/** Before « le », « la », « les », « l' » these make it an object pronoun (« je la range »), not an article. */
const BEFORE_CLITIC = new Set(['je', 'j', 'tu', 'il', 'elle', 'on', 'nous', 'vous', 'ils', 'elles', 'ne', 'n', 'me', 'm', 'te', 't', 'se', 's', 'lui']);
/** Where an infinitive stands: after a modal, « aller », « faut », a preposition, a clitic or another verb (« il faut ranger », « pour la ranger »). */
const BEFORE_INFINITIVE = new Set(['pour', 'de', 'd', 'a', 'sans', 'comment', 'me', 'm', 'te', 't', 'se', 's', 'le', 'la', 'les', 'l', 'lui', 'y', 'nous', 'vous', 'faut', 'faudra', 'faudrait', 'fallait']);
function infinitivePosition(tokens: string[], i: number): boolean {
  const before = tokens[i - 1] ?? '';
  // « faut-il arroser », « peux-tu venir »: the modal before its inverted subject.
  const inverted = MODAL_KEYS.has(tokens[i - 2] ?? '') && /^(il|je|tu|on|vous|nous)$/.test(before);
  return i === 0 || inverted || BEFORE_INFINITIVE.has(before) || MODAL_KEYS.has(before) || GROUPS.get(before) === '=aller' || REQUESTS.has(before) || GIVE.has(before) || /(er|ir|re)$/.test(before) || /(e|es|ent|ons|ez|ais|ait)$/.test(before) && !DETERMINERS_OF_NOUNS.has(before) && GROUPS.has(before);
}

/** An infinitive's form: « -er », « -ir », « -oir », and the « -re » verbs (« l'heure », « une lettre » are nouns). */
const RE_INFINITIVES = new Set(fold('faire dire lire écrire prendre mettre boire attendre entendre vendre rendre descendre perdre répondre croire plaire rire cuire conduire connaître naître peindre éteindre coudre suivre vivre battre permettre promettre apprendre comprendre reprendre traduire construire détruire inscrire décrire'));
const infinitive = (word: string) => /(er|ir|oir)$/.test(word) || RE_INFINITIVES.has(word);

/** Before a noun, after a determiner: « une bonne soupe », « le petit chat ». */
export const PRE_ADJECTIVES = new Set(fold('bon bonne bons bonnes petit petite petits petites grand grande grands grandes beau belle beaux belles vieux vieille vieilles nouveau nouvelle nouveaux nouvelles joli jolie jolis jolies gros grosse grosses mauvais mauvaise premier première dernier dernière meilleur meilleure autre autres même vrai vraie'));
const PREPOSITIONS_OF_NOUNS = new Set(['sans', 'avec', 'en', 'par', 'pour', 'chez', 'sur', 'sous', 'quel', 'quelle', 'quels', 'quelles', 'a']);
function nounPosition(tokens: string[], said: string[], i: number): boolean {
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

/** Modal verb forms to what they ask (may, must, should, want). */
const MODAL_KEYS = new Map(Object.entries(MODAL_VERBS).flatMap(([key, forms]) => fold(forms).map((f) => [f, key] as const)));
const IMPERSONAL_MUST = new Set(['faut', 'faudra', 'fallait', 'faudrait']);
const REQUEST_LEMMA = new Map(REQUEST_LEMMAS.flatMap((group) => fold(group).map((f) => [f, `v:${fold(group)[0]!}`] as const)));

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
/** « donne-moi », « tu peux me donner », « lis-moi », « tu me lis » ask to be told, as « dis-moi » does (again: « redonne-moi », « tu me redis »). */
const GIVE = new Set(['donne', 'donnes', 'donnez', 'donner', 'redonne', 'redonnes', 'redonnez', 'redonner', 'lis', 'lisez', 'lire']);
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
const FUTURE = 't:future';
OPPOSITES.set(PAST, new Set([FUTURE]));
OPPOSITES.set(FUTURE, new Set([PAST]));
/**
 * Whom the verb acts on: its doer itself (« il s'est coupé », « je me suis levée ») or another (« il l'a
 * coupé », « je lui ai dit »). A reflexive clitic on one side and an object clitic on the other refuse.
 */
const ITSELF = 'c:itself';
const ANOTHER = 'c:another';
OPPOSITES.set(ITSELF, new Set([ANOTHER]));
OPPOSITES.set(ANOTHER, new Set([ITSELF]));
const THIRD_PERSONS = new Set(['il', 'elle', 'on', 'ils', 'elles']);
const OBJECT_CLITICS = new Set(['le', 'la', 'les', 'l', 'lui', 'leur']);
/** The clitic at `i` after a subject pronoun (a « ne » between): the verb's doer itself, another, or neither. */
function cliticTarget(tokens: string[], i: number): string | undefined {
  const subject = tokens[i - 1] === 'ne' || tokens[i - 1] === 'n' ? tokens[i - 2] : tokens[i - 1];
  if (subject === undefined || !SUBJECTS.has(subject) && subject !== 'tu') return undefined;
  const w = tokens[i]!;
  // « s'il », « s'ils »: « si », no clitic.
  if ((w === 'se' || (w === 's' && !/^ils?$/.test(tokens[i + 1] ?? ''))) && THIRD_PERSONS.has(subject)) return ITSELF;
  if (((w === 'me' || w === 'm') && /^(je|j)$/.test(subject)) || ((w === 'te' || w === 't') && subject === 'tu')) return ITSELF;
  return OBJECT_CLITICS.has(w) ? ANOTHER : undefined;
}
const ALLER = '=aller';
const VENIR = '=venir';
const INFINITIVE = /(er|ir|re|oir)$/;
const CLITICS = new Set(['moi', 'toi', 'me', 'm', 'te', 't', 'se', 's', 'le', 'la', 'les', 'l', 'lui', 'leur', 'y', 'en', 'nous', 'vous', 'je', 'j', 'tu', 'il', 'elle', 'on', 'ils', 'elles', 'ne', 'n', 'pas', 'plus', 'jamais', 'bien', 'déjà', 'encore', 'toujours', 'tout']);
const AVOIR = new Set(['ai', 'as', 'a', 'avons', 'avez', 'ont']);
const ETRE = new Set(['suis', 'es', 'est', 'sommes', 'êtes', 'sont']);
/**
 * What may stand between an auxiliary and its participle: an inverted subject (« a-t-il mangé », « es-tu
 * allée ») and an adverb (« n'a pas encore mangé », « a bien dormi »). No article: « il y a le marché »,
 * « c'est le mercredi » have none.
 */
const BEFORE_PARTICIPLE = new Set(['t', 'je', 'tu', 'il', 'elle', 'on', 'nous', 'vous', 'ils', 'elles', 'pas', 'plus', 'jamais', 'rien', 'bien', 'déjà', 'encore', 'toujours', 'tout', 'vraiment', 'beaucoup', 'souvent', 'enfin', 'bientôt', 'mal', 'trop']);
const IRREGULAR_PARTICIPLES = new Set(
  ('fait dit écrit pris mis appris compris repris surpris promis permis remis admis assis acquis ouvert couvert découvert offert souffert ' +
    'éteint peint atteint craint plaint joint rejoint teint cuit conduit construit détruit produit traduit ' +
    'eu été su pu voulu dû vu bu lu plu cru reçu connu venu tenu vécu né mort').split(' '),
);
/**
 * The verbs whose passé composé takes « être » (« il est parti », « elle est tombée »). After « être » any
 * other participle tells a state or a passive, said in the present: « la poste est fermée », « c'est
 * chanté par qui », « elle est retraitée » ask of now.
 */
const ETRE_VERBS = new Set(
  ('allé venu revenu devenu parvenu survenu intervenu arrivé parti reparti sorti ressorti entré rentré monté remonté descendu redescendu ' +
    'tombé retombé né mort décédé resté passé repassé retourné apparu disparu').split(' '),
);
/** A participle's masculine singular: « parties » → « parti », « offerte » → « offert ». */
const masculine = (w: string) => w.replace(/(?<=[éiut])e?s?$/, '');
/** Words the participle pattern would take that are none (days, too: « c'est lundi »): « midi », « jusqu' », « lui ». */
const NO_PARTICIPLE = new Set(['du', 'jusqu', 'midi', 'ici', 'lui', 'aussi', 'parmi', 'ceci', 'celui', 'ami', 'amie', 'lieu']);
// « du » is the article (« j'ai du mal à dormir »); the participle « dû » keeps its accent.
const participle = (w: string) => !NO_PARTICIPLE.has(w) && !CALENDAR.has(w) && (/(é|ée|és|ées)$/.test(w) || IRREGULAR_PARTICIPLES.has(w) || IRREGULAR_PARTICIPLES.has(masculine(w)) || /[^aeiouy](ie?s?|ue?s?)$/.test(w));
/** Participles of the forecast frame (« ils ont prévu de la pluie », « la météo a annoncé ») tell of what is to come. */
const FORECAST = new Set(['prévu', 'prévue', 'annoncé', 'annoncée']);
/**
 * What the auxiliary at `i` tells with the participle after it: a past with « avoir » and any
 * participle, or with « être » and the participle of an « être » verb or after a reflexive (« elle
 * s'est mariée », « je me suis levée »); a state with « être » and any other participle (« la fenêtre
 * est fermée »), which is the present of that past's result: it agrees with either (« le gaz est
 * éteint ? » / « j'ai éteint le gaz ? »).
 */
function pastAt(tokens: string[], said: string[], i: number): string | undefined {
  const aux = said[i]!;
  if (!AVOIR.has(aux) && !ETRE.has(aux)) return undefined;
  const next = said.slice(i + 1).find((t) => !BEFORE_PARTICIPLE.has(t)) ?? '';
  if (!participle(next) || FORECAST.has(next)) return undefined;
  if (AVOIR.has(aux)) return PAST;
  const before = tokens[i - 1] === 'ne' || tokens[i - 1] === 'n' ? tokens[i - 2] : tokens[i - 1];
  const reflexive = /^(se|s|me|m|te|t)$/.test(before ?? '') || (/^(nous|vous)$/.test(before ?? '') && tokens.lastIndexOf(before!, i - 2) >= 0);
  return reflexive || ETRE_VERBS.has(masculine(next)) ? PAST : STATE;
}
/** « tu te souviens », « tu te rappelles » ask of the past in the present: no tense to match. */
const RECALL = new Set(fold('souviens souvient souvenez souvenir rappelles rappelle rappelez rappeler'));
const RECALLS = 't:recalls';
const STATE = 't:state';
/** « depuis trois jours », « ça fait trois jours que »: a present that runs from the past, as a passé composé does. */
const SINCE = 't:since';
/** Markers that let a past and a present ask the same thing when one side carries them (both, for SINCE). */
const tenseFree = (a: ContentSignature, b: ContentSignature) =>
  [RECALLS, STATE].some((m) => a.contrasts.includes(m) || b.contrasts.includes(m)) || (a.contrasts.includes(SINCE) && b.contrasts.includes(SINCE));
const FUTURE_FORM = /^(ser|aur|fer|ir|viendr|reviendr|pourr|voudr|devr|faudr|pleuvr|verr|saur|tiendr|enverr)(ai|as|a|ons|ez|ont)$|..(erai|eras|era|erons|erez|eront|irai|iras|ira|irons|irez|iront)$/;
/**
 * The imperfect tells of the past as the passé composé does (« on était là » / « on a été là »): être
 * and avoir, faire and aller, and a listed verb whose stem the lexicon proves (« mangeait » of
 * « manger », « dormions » of « dormir »). A modal's imperfect (« je voulais savoir ») stays a frame.
 */
const IMPERFECT_ENDING = /(ais|ait|ions|iez|aient)$/;
const IMPERFECT_STEMS = new Set(['et', 'av', 'fais', 'all', 'ven', 'reven', 'pren', 'mett', 'voy', 'dis', 'lis', 'buv', 'croy', 'connaiss', 'ecriv', 'viv']);
function imperfect(word: string, said: string, afterSubject: boolean): boolean {
  const ending = IMPERFECT_ENDING.exec(word);
  if (!ending || MODAL_KEYS.has(word)) return false;
  const root = word.slice(0, -ending[1]!.length);
  if (IMPERFECT_STEMS.has(root)) return true;
  // Right after its subject (« ça coûtait », « il pleurait ») any verb's imperfect, unless a future stem
  // makes it a conditional (« ça coûterait », « il prendrait », « il aurait »: no past); « on espérait » keeps its accent.
  if (afterSubject && root.length >= 2 && /^(ait|ais|aient)$/.test(ending[1]!) && !PRESENT_IN_AI.has(word) && !/(er|ir|dr|rr|ttr|vr|aur)$/.test(said.slice(0, -ending[1]!.length))) return true;
  // « mangeait »: the « e » that keeps the sound belongs to the ending.
  // « finissait » of « finir »: the « -iss- » too.
  return root.length >= 3 && (INFINITIVE_STEMS.has(root.replace(/ge$/, 'g')) || (root.endsWith('iss') && INFINITIVE_STEMS.has(root.slice(0, -3))));
}
/** The present of « -aître » and « -aire » verbs ends as an imperfect does: « tu connais », « ça me plaît ». */
const PRESENT_IN_AI = new Set(fold('connais connaît connait reconnais reconnaît reconnait parais paraît parait apparaît apparait disparaît disparait plais plaît plait déplaît déplait'));
/** A verb's subject just before it (« ça coûtait », « il ne pleurait »), or the question word it is inverted after (« combien coûtait »). */
const SUBJECT_BEFORE = new Set(['ca', 'cela', 'je', 'j', 'tu', 'il', 'elle', 'on', 'nous', 'vous', 'ils', 'elles', 'combien', 'ouwh', 'quand', 'comment', 'pourquoi', 'que', 'qu']);
function afterItsSubject(tokens: string[], i: number): boolean {
  const at = tokens[i - 1] === 'ne' || tokens[i - 1] === 'n' ? i - 2 : i - 1;
  // or a noun after its determiner, not an adjective before one (« une baguette coûtait », not « un beau portrait »)
  return SUBJECT_BEFORE.has(tokens[at] ?? '') || (at >= 1 && DETERMINERS_OF_NOUNS.has(tokens[at - 1]!) && !PRE_ADJECTIVES.has(tokens[at]!) && !STOPS.has(tokens[at]!));
}
/** The first word after `i` that is not a clitic, a pronoun or a negation (« n'a pas encore déménagé »). */
const nextWord = (said: string[], i: number) => said.slice(i + 1).find((t) => !CLITICS.has(t)) ?? '';

/**
 * Whether the request verb at `i` asks « what »: not when « je » says it (« je connais une
 * blague »), nor before a yes/no « si » (« dis-moi s'il neige »), nor as a tag before a comma or at
 * the end (« Dis, il y a une alerte ? », « Il va pleuvoir, tu sais ? »). A participle (« je te l'ai
 * raconté ») tells, it does not ask.
 */
const OBJECT_BEFORE = new Set(['le', 'la', 'les', 'l', 'en', 'y', 'me', 'm', 'te', 'lui', 'leur']);
function asksWhat(tokens: string[], i: number, boundary: Set<number>): boolean {
  let before = i - 1;
  while (before >= 0 && REFLEXIVE.has(tokens[before]!) && tokens[before] !== 'nous' && tokens[before] !== 'vous') before -= 1;
  if (tokens[before] === 'je' || tokens[before] === 'j') return false;
  let after = i + 1;
  while (TO_ME.has(tokens[after] ?? '')) after += 1;
  // Alone before a comma or at the end it is a tag, asking nothing: « Dis, il y a… », « …, tu sais ? » (« Une
  // blague, raconte-moi. » and « Claire, tu la connais ? » ask: their pronoun stands for what is asked).
  if (after === i + 1 && !OBJECT_BEFORE.has(tokens[i - 1] ?? '') && (after >= tokens.length || boundary.has(after))) return false;
  const next = tokens[after] ?? '';
  return !(next === 'si' || next === 'que' || next === 'qu' || (next === 's' && /^ils?$/.test(tokens[after + 1] ?? '')));
}

/**
 * « ma fille doit passer à quelle heure ? », « le ramoneur doit venir quand ? »: « devoir » before a coming or
 * going, said of someone else, tells what is planned, as « ma fille passe à quelle heure ? » does — no
 * obligation. « je dois aller », « tu dois partir » keep it, and so does « il faut ».
 */
const COMINGS = new Set(fold('venir passer arriver aller rentrer revenir repasser partir'));
function plannedVisit(tokens: string[], i: number): boolean {
  if (!/^(doit|doivent|devait|devaient|devra|devront)$/.test(tokens[i]!) || !COMINGS.has(tokens[i + 1] ?? '')) return false;
  return !/^(je|j|tu|on|nous|vous)$/.test(tokens[i - 1] ?? '');
}

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

/** « donne-moi », « tu me donnes », « tu me les lis »: the verb at `i` is said to the senior. */
const toMe = (tokens: string[], i: number) =>
  tokens[i + 1] === 'moi' || /^(me|m)$/.test(tokens[i - 1] ?? '') || (/^(le|la|les|l)$/.test(tokens[i - 1] ?? '') && /^(me|m)$/.test(tokens[i - 2] ?? ''));

const MODALS = new Set(['peux', 'peut', 'pourrais', 'pourriez', 'pouvez', 'veux', 'voulez', 'voudrais', 'voudriez', 'bien']);

const SUBJECTS = new Set(['je', 'j', 'il', 'elle', 'on', 'nous', 'ils', 'elles']);
/**
 * Whether the modal at `i` is only a polite frame, asking nothing of its own: « tu peux allumer
 * la radio » and « pourriez-vous me lire » ask what « allume la radio » asks, « je voudrais savoir
 * quand… » what « quand… » asks, « j'aimerais que tu me racontes » what « raconte-moi » asks.
 * « je peux », « on doit », « il faut », « tu dois » ask their own question.
 */
function politeFrame(tokens: string[], i: number, modal: string): boolean {
  let j = i + 1;
  while (TO_ME.has(tokens[j] ?? '') || tokens[j] === 'bien' || tokens[j] === 'tu' || tokens[j] === 'vous') j += 1;
  const verb = tokens[j] ?? '';
  if ((modal === 'm:can' || modal === 'm:want') && (REQUESTS.has(verb) || GIVE.has(verb) || EXPLAIN.has(verb))) return true;
  if (modal === 'm:want' && /^(que|qu)$/.test(tokens[i + 1] ?? '') && /^(tu|vous)$/.test(tokens[i + 2] ?? '')) return true;
  // « j'aimerais un livre », « je voudrais un café » ask for a thing, as « donne-moi » does.
  if (/^(voudrais|aimerais)$/.test(tokens[i]!) && /^(un|une|des|du|le|la|les|l)$/.test(tokens[i + 1] ?? '')) return true;
  if (modal !== 'm:can' && modal !== 'm:want') return false;
  // « tu veux jouer aux cartes ? » asks what the one asked wants, « tu peux jouer… » whether they may:
  // « vouloir » frames a request only with « bien » (« tu veux bien allumer ») or as « veuillez ».
  if (modal === 'm:want' && tokens[i] !== 'veuillez' && tokens[i + 1] !== 'bien' && tokens[i + 2] !== 'bien') return false;
  const said = /^(tu|vous)$/.test(tokens[i - 1] ?? '') && !SUBJECTS.has(tokens[i - 2] ?? '');
  const inverted = /^(tu|vous)$/.test(tokens[i + 1] ?? '');
  return said || inverted || tokens[i] === 'veuillez';
}
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
    if (key === '=bon' && DETERMINERS.has(tokens[i - 1] ?? '')) continue;
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
    for (const y of OPPOSITES.get(x) ?? []) if (b.contrasts.includes(y) && !a.contrasts.includes(y)) return `contrast: ${x} / ${y}`;
  }
  return undefined;
}
export const contentAgree = (a: ContentSignature, b: ContentSignature): boolean => contentDisagreement(a, b) === undefined;

/** Whether the question tells of what is to come (« il va pleuvoir », « il pleuvra »), for the guard's time check. */
export const tellsFuture = (s: ContentSignature): boolean => s.contrasts.includes(FUTURE);

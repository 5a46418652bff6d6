/**
 * What a verb tells beyond its content key, for the content-word guard: its tense (a past, a future, a
 * state, a present running from the past) and whom it acts on (its doer itself or another). Each is a
 * marker in the signature's contrasts; MARK_OPPOSITES says which refuse each other. Pure: neighbouring
 * words and endings only.
 */
import { AVOIR_PRESENT, DETERMINERS_OF_NOUNS, ETRE_PRESENT, PRE_ADJECTIVES, SUBJECT_PRONOUNS, SUBJECTS_NOT_ADDRESSED } from '../french/word-classes.ts';
import { fold } from '../french/words.ts';
import { CALENDAR, INFINITIVE_STEMS, STOPS } from './content-keys.ts';
import { MODAL_KEYS } from './requests.ts';

/**
 * Tense: « mon voisin a déménagé ? » is not « mon voisin va déménager ? ». A past (auxiliary then
 * participle) on one side and a future (« aller » then an infinitive, or a future ending) on the
 * other refuse like opposites. « aller » before an infinitive is that future, not a movement.
 */
export const PAST = 't:past';
export const FUTURE = 't:future';
/**
 * Whom the verb acts on: its doer itself (« il s'est coupé », « je me suis levée ») or another (« il l'a
 * coupé », « je lui ai dit »). A reflexive clitic on one side and an object clitic on the other refuse.
 */
const ITSELF = 'c:itself';
const ANOTHER = 'c:another';
/** The markers that refuse each other as opposite words do: a past and a future, the doer itself and another. */
export const MARK_OPPOSITES = new Map([
  [PAST, new Set([FUTURE])],
  [FUTURE, new Set([PAST])],
  [ITSELF, new Set([ANOTHER])],
  [ANOTHER, new Set([ITSELF])],
]);
const THIRD_PERSONS = new Set(['il', 'elle', 'on', 'ils', 'elles']);
const OBJECT_CLITICS = new Set(['le', 'la', 'les', 'l', 'lui', 'leur']);
/** The clitic at `i` after a subject pronoun (a « ne » between): the verb's doer itself, another, or neither. */
export function cliticTarget(tokens: string[], i: number): string | undefined {
  const subject = tokens[i - 1] === 'ne' || tokens[i - 1] === 'n' ? tokens[i - 2] : tokens[i - 1];
  if (subject === undefined || !SUBJECTS_NOT_ADDRESSED.has(subject) && subject !== 'tu') return undefined;
  const w = tokens[i]!;
  // « s'il », « s'ils »: « si », no clitic.
  if ((w === 'se' || (w === 's' && !/^ils?$/.test(tokens[i + 1] ?? ''))) && THIRD_PERSONS.has(subject)) return ITSELF;
  if (((w === 'me' || w === 'm') && /^(je|j)$/.test(subject)) || ((w === 'te' || w === 't') && subject === 'tu')) return ITSELF;
  return OBJECT_CLITICS.has(w) ? ANOTHER : undefined;
}
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
export function pastAt(tokens: string[], said: string[], i: number): string | undefined {
  const aux = said[i]!;
  if (!AVOIR_PRESENT.has(aux) && !ETRE_PRESENT.has(aux)) return undefined;
  const next = said.slice(i + 1).find((t) => !BEFORE_PARTICIPLE.has(t)) ?? '';
  if (!participle(next) || FORECAST.has(next)) return undefined;
  if (AVOIR_PRESENT.has(aux)) return PAST;
  const before = tokens[i - 1] === 'ne' || tokens[i - 1] === 'n' ? tokens[i - 2] : tokens[i - 1];
  const reflexive = /^(se|s|me|m|te|t)$/.test(before ?? '') || (/^(nous|vous)$/.test(before ?? '') && tokens.lastIndexOf(before!, i - 2) >= 0);
  return reflexive || ETRE_VERBS.has(masculine(next)) ? PAST : STATE;
}
/** « tu te souviens », « tu te rappelles » ask of the past in the present: no tense to match. */
export const RECALL = new Set(fold('souviens souvient souvenez souvenir rappelles rappelle rappelez rappeler'));
export const RECALLS = 't:recalls';
const STATE = 't:state';
/** « depuis trois jours », « ça fait trois jours que »: a present that runs from the past, as a passé composé does. */
export const SINCE = 't:since';
/** Markers that let a past and a present ask the same thing when one side carries them (both, for SINCE). */
export const tenseFree = (a: { contrasts: readonly string[] }, b: { contrasts: readonly string[] }): boolean =>
  [RECALLS, STATE].some((m) => a.contrasts.includes(m) || b.contrasts.includes(m)) || (a.contrasts.includes(SINCE) && b.contrasts.includes(SINCE));
export const FUTURE_FORM = /^(ser|aur|fer|ir|viendr|reviendr|pourr|voudr|devr|faudr|pleuvr|verr|saur|tiendr|enverr)(ai|as|a|ons|ez|ont)$|..(erai|eras|era|erons|erez|eront|irai|iras|ira|irons|irez|iront)$/;
/**
 * The imperfect tells of the past as the passé composé does (« on était là » / « on a été là »): être
 * and avoir, faire and aller, and a listed verb whose stem the lexicon proves (« mangeait » of
 * « manger », « dormions » of « dormir »). A modal's imperfect (« je voulais savoir ») stays a frame.
 */
const IMPERFECT_ENDING = /(ais|ait|ions|iez|aient)$/;
const IMPERFECT_STEMS = new Set(['et', 'av', 'fais', 'all', 'ven', 'reven', 'pren', 'mett', 'voy', 'dis', 'lis', 'buv', 'croy', 'connaiss', 'ecriv', 'viv']);
export function imperfect(word: string, said: string, afterSubject: boolean): boolean {
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
const SUBJECT_BEFORE = new Set(['ca', 'cela', ...SUBJECT_PRONOUNS, 'combien', 'ouwh', 'quand', 'comment', 'pourquoi', 'que', 'qu']);
export function afterItsSubject(tokens: string[], i: number): boolean {
  const at = tokens[i - 1] === 'ne' || tokens[i - 1] === 'n' ? i - 2 : i - 1;
  // or a noun after its determiner, not an adjective before one (« une baguette coûtait », not « un beau portrait »)
  return SUBJECT_BEFORE.has(tokens[at] ?? '') || (at >= 1 && DETERMINERS_OF_NOUNS.has(tokens[at - 1]!) && !PRE_ADJECTIVES.has(tokens[at]!) && !STOPS.has(tokens[at]!));
}
/** The first word after `i` that is not a clitic, a pronoun or a negation (« n'a pas encore déménagé »). */

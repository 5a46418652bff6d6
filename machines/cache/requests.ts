/**
 * Requests and modal frames for the content-word guard: whether a request verb asks « what »
 * (« dis-moi … », « tu connais … »), whether a modal only frames a request (« tu peux allumer … »), and
 * whether « tu » is only the one asked. Pure: neighbouring words only.
 */
import { HOW_NOUNS, MODAL_VERBS, REQUEST_VERBS } from '../french/lexicon.ts';
import { SUBJECTS_NOT_ADDRESSED } from '../french/word-classes.ts';
import { fold } from '../french/words.ts';

export const HOW = new Set(fold(HOW_NOUNS));
/** Modal verb forms to what they ask (may, must, should, want). */
export const MODAL_KEYS = new Map(Object.entries(MODAL_VERBS).flatMap(([key, forms]) => fold(forms).map((f) => [f, key] as const)));

/** « donne-moi », « tu peux me donner », « lis-moi », « tu me lis » ask to be told, as « dis-moi » does (again: « redonne-moi », « tu me redis »). */
export const GIVE = new Set(['donne', 'donnes', 'donnez', 'donner', 'redonne', 'redonnes', 'redonnez', 'redonner', 'lis', 'lisez', 'lire']);
export const REQUESTS = new Set(fold(REQUEST_VERBS));

export const REFLEXIVE = new Set(['me', 'm', 'te', 't', 'se', 's', 'nous', 'vous']);
/** The pronouns between a request verb and what it asks (« dis-moi », « tu peux me dire »). */
export const TO_ME = new Set(['moi', 'me', 'm', 'nous', 'vous', 'te', 't', 'lui']);
export const EXPLAIN = new Set(['explique', 'expliques', 'expliquez', 'expliquer']);

/**
 * Whether the request verb at `i` asks « what »: not when « je » says it (« je connais une
 * blague »), nor before a yes/no « si » (« dis-moi s'il neige »), nor as a tag before a comma or at
 * the end (« Dis, il y a une alerte ? », « Il va pleuvoir, tu sais ? »). A participle (« je te l'ai
 * raconté ») tells, it does not ask.
 */
const OBJECT_BEFORE = new Set(['le', 'la', 'les', 'l', 'en', 'y', 'me', 'm', 'te', 'lui', 'leur']);
export function asksWhat(tokens: string[], i: number, boundary: Set<number>): boolean {
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
export function plannedVisit(tokens: string[], i: number): boolean {
  if (!/^(doit|doivent|devait|devaient|devra|devront)$/.test(tokens[i]!) || !COMINGS.has(tokens[i + 1] ?? '')) return false;
  return !/^(je|j|tu|on|nous|vous)$/.test(tokens[i - 1] ?? '');
}

/** « donne-moi », « tu me donnes », « tu me les lis »: the verb at `i` is said to the senior. */
export const toMe = (tokens: string[], i: number) =>
  tokens[i + 1] === 'moi' || /^(me|m)$/.test(tokens[i - 1] ?? '') || (/^(le|la|les|l)$/.test(tokens[i - 1] ?? '') && /^(me|m)$/.test(tokens[i - 2] ?? ''));

const MODALS = new Set(['peux', 'peut', 'pourrais', 'pourriez', 'pouvez', 'veux', 'voulez', 'voudrais', 'voudriez', 'bien']);

/**
 * Whether the modal at `i` is only a polite frame, asking nothing of its own: « tu peux allumer
 * la radio » and « pourriez-vous me lire » ask what « allume la radio » asks, « je voudrais savoir
 * quand… » what « quand… » asks, « j'aimerais que tu me racontes » what « raconte-moi » asks.
 * « je peux », « on doit », « il faut », « tu dois » ask their own question.
 */
export function politeFrame(tokens: string[], i: number, modal: string): boolean {
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
  const said = /^(tu|vous)$/.test(tokens[i - 1] ?? '') && !SUBJECTS_NOT_ADDRESSED.has(tokens[i - 2] ?? '');
  const inverted = /^(tu|vous)$/.test(tokens[i + 1] ?? '');
  return said || inverted || tokens[i] === 'veuillez';
}
/**
 * Whether the « tu » at `i` only asks (« tu sais si… », « tu peux me dire… », « tu te souviens… »,
 * « tu as une recette… »): it is the one asked, not the one the question is about, so it has no
 * contrast with « je » (« tu es fatiguée ? » / « je suis fatiguée ? » keeps it).
 */
export function asksOnly(tokens: string[], i: number): boolean {
  let j = i + 1;
  while (TO_ME.has(tokens[j] ?? '') || MODALS.has(tokens[j] ?? '') || tokens[j] === 'se') j += 1;
  const verb = tokens[j] ?? '';
  if (REQUESTS.has(verb) || GIVE.has(verb)) return true;
  return (verb === 'as' || verb === 'avez') && /^(un|une|des)$/.test(tokens[j + 1] ?? '') && (HOW.has(tokens[j + 2] ?? '') || tokens[j + 2] === 'idee');
}


/**
 * The whole near-miss guard a candidate above the similarity threshold must pass: the two
 * questions agree on their details (machines/cache/question-details.ts), on their content words
 * (machines/cache/content-words.ts), on who does what to whom, on which noun does it to which, and on
 * which noun each noun phrase's « de » completes (machines/cache/question-roles.ts).
 * Computed once per question — a cached entry keeps its own.
 */
import { SPOKEN_PHRASES } from '../french/lexicon.ts';
import { words } from '../french/words.ts';
import { contentDisagreement, contentSignature, tellsFuture, type ContentSignature } from './content-words.ts';
import { detailsDisagreement, questionDetails, type QuestionDetails } from './question-details.ts';
import { nounStructure, ordersAgree, phrasesAgree, questionRoles } from './question-roles.ts';

export interface QuestionGuard {
  details: QuestionDetails;
  content: ContentSignature;
  /** The people's roles, sorted: « subj:fille », « obj:self ». */
  roles: string[];
  /** Nouns around a verb, doer first: « france>bresil ». */
  order: string[];
  /** Noun phrases, head first (« gamelle<chien »), the order's pairs reached through a preposition, and every noun's key. */
  phrases: string[];
  toward: string[];
  nouns: string[];
}

/** The question with its spoken phrases in their one-word form (« une histoire drôle » → « une blague »). */
export function spokenForms(question: string): string {
  return SPOKEN_PHRASES.reduce((text, [phrase, word]) => text.replace(phrase, word), question);
}

export function questionGuard(question: string): QuestionGuard {
  const text = spokenForms(question);
  const split = words(text);
  return { details: questionDetails(text), content: contentSignature(text, split), roles: questionRoles(text, split), ...nounStructure(text, split) };
}

/**
 * Which part of the guard refuses the pair, by a constant name (« content », « tense: past / not past », a
 * detail's field such as « numbers », « roles », « order », « phrases »), or undefined when the two may share an
 * answer. No string is built: the lookup tries every candidate above the threshold with it.
 */
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
/**
 * The roles with the senior as the object left unsaid, as a senior at home leaves it: « mon fils a laissé un
 * message ? » means « … m'a laissé un message ? », « Madame Martin a téléphoné ? » « … m'a appelée ? ». Only
 * when someone named does it (kin, a role, a name: not « on », « il »), so « on m'a appelée ? » stays apart from
 * « j'ai appelé ? »; a subject left alone has no role, as in questionRoles.
 */
function unsaidSelf(roles: readonly string[]): readonly string[] {
  if (!roles.includes('obj:self') || !roles.some((r) => r.startsWith('subj:') && !/^subj:(self|you|them)$/.test(r))) return roles;
  const rest = roles.filter((r) => r !== 'obj:self');
  return rest.length === 1 ? [] : rest;
}

/** A day, a part of the day, an hour or a time counted from now (the details both questions already share). */
const saysWhen = (d: QuestionDetails) => d.when.length > 0 || d.times.length > 0 || d.relative.length > 0;

export function guardDisagreement(a: QuestionGuard, b: QuestionGuard): string | undefined {
  const content = contentDisagreement(a.content, b.content);
  if (content) return content;
  const details = detailsDisagreement(a.details, b.details);
  if (details) return details;
  // A present serves the future once a time is said (« ma fille vient dimanche » / « … viendra dimanche »);
  // without one it asks of now: « il pleut ? » is not « il va pleuvoir ? ».
  if (tellsFuture(a.content) !== tellsFuture(b.content) && !saysWhen(a.details)) return 'tense: future / present, no time said';
  if (!same(a.roles, b.roles) && !same(unsaidSelf(a.roles), b.roles) && !same(a.roles, unsaidSelf(b.roles))) return 'roles';
  if (!ordersAgree(a.order, b.order)) return 'order';
  if (!phrasesAgree(a, b)) return 'phrases';
  return undefined;
}

export const guardsAgree = (a: QuestionGuard, b: QuestionGuard): boolean => guardDisagreement(a, b) === undefined;

/**
 * The whole near-miss guard a candidate above the similarity threshold must pass: the two
 * questions agree on their details (machines/cache/question-details.ts), on their content words
 * (machines/cache/content-words.ts), on who does what to whom, on which noun does it to which, and on
 * which noun each noun phrase's « de » completes (machines/cache/question-roles.ts).
 * Computed once per question — a cached entry keeps its own.
 */
import { contentDisagreement, contentSignature, tellsFuture, words, type ContentSignature } from './content-words.ts';
import { SPOKEN_PHRASES } from './french-lexicon.ts';
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

/** Which part of the guard refuses the pair and on what (« roles: … »), or undefined when the two may share an answer. */
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
  if (a.roles.length !== b.roles.length || a.roles.some((r, i) => r !== b.roles[i])) return `roles: ${a.roles.join(' ') || '∅'} / ${b.roles.join(' ') || '∅'}`;
  if (!ordersAgree(a.order, b.order)) return `noun order: ${a.order.join(' ')} / ${b.order.join(' ')}`;
  if (!phrasesAgree(a, b)) return `noun phrases: ${a.phrases.join(' ') || '∅'} / ${b.phrases.join(' ') || '∅'}`;
  return undefined;
}

export const guardsAgree = (a: QuestionGuard, b: QuestionGuard): boolean => guardDisagreement(a, b) === undefined;

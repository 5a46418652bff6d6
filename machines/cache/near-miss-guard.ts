/**
 * The whole near-miss guard a candidate above the similarity threshold must pass: the two
 * questions agree on their details (machines/cache/question-details.ts), on their content words
 * (machines/cache/content-words.ts), on who does what to whom, on which noun does it to which, and on
 * which noun each noun phrase's « de » completes (machines/cache/question-roles.ts).
 * Computed once per question — a cached entry keeps its own.
 */
import { contentAgree, contentSignature, words, type ContentSignature } from './content-words.ts';
import { SPOKEN_PHRASES } from './french-lexicon.ts';
import { detailsAgree, questionDetails, type QuestionDetails } from './question-details.ts';
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

export function guardsAgree(a: QuestionGuard, b: QuestionGuard): boolean {
  return contentAgree(a.content, b.content) && detailsAgree(a.details, b.details) && a.roles.length === b.roles.length && a.roles.every((r, i) => r === b.roles[i]) && ordersAgree(a.order, b.order) && phrasesAgree(a, b);
}

/**
 * The whole near-miss guard a candidate above the similarity threshold must pass: the two
 * questions agree on their details (machines/cache/question-details.ts) and on their content words
 * (machines/cache/content-words.ts). Computed once per question — a cached entry keeps its own.
 */
import { contentAgree, contentSignature, type ContentSignature } from './content-words.ts';
import { SPOKEN_PHRASES } from './french-lexicon.ts';
import { detailsAgree, questionDetails, type QuestionDetails } from './question-details.ts';

export interface QuestionGuard {
  details: QuestionDetails;
  content: ContentSignature;
}

/** The question with its spoken phrases in their one-word form (« une histoire drôle » → « une blague »). */
export function spokenForms(question: string): string {
  return SPOKEN_PHRASES.reduce((text, [phrase, word]) => text.replace(phrase, word), question);
}

export function questionGuard(question: string): QuestionGuard {
  const text = spokenForms(question);
  return { details: questionDetails(text), content: contentSignature(text) };
}

export function guardsAgree(a: QuestionGuard, b: QuestionGuard): boolean {
  return contentAgree(a.content, b.content) && detailsAgree(a.details, b.details);
}

/**
 * The whole near-miss guard a candidate above the similarity threshold must pass: the two
 * questions agree on their details (machines/question-details.ts) and on their content words
 * (machines/content-words.ts). Computed once per question — a cached entry keeps its own.
 */
import { contentAgree, contentSignature, type ContentSignature } from './content-words.ts';
import { detailsAgree, questionDetails, type QuestionDetails } from './question-details.ts';

export interface QuestionGuard {
  details: QuestionDetails;
  content: ContentSignature;
}

export function questionGuard(question: string): QuestionGuard {
  return { details: questionDetails(question), content: contentSignature(question) };
}

export function guardsAgree(a: QuestionGuard, b: QuestionGuard): boolean {
  return contentAgree(a.content, b.content) && detailsAgree(a.details, b.details);
}

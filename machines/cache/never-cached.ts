/**
 * Everything the semantic cache never serves nor stores, in one list: docs/semantic-cache.md's « Never from
 * the cache » quotes each line and test/unit/never-cached.test.ts holds the two together. The question side is
 * decided here (`questionRefusal`); the reply side by the session machine, which gives a storing ticket to a
 * completed agent reply only.
 */
import { normalizeQuestion } from '../french/words.ts';
import { isHealthQuestion } from './health-topics.ts';
import { isFollowUp } from './question-details.ts';

export const NEVER_CACHED = {
  health: 'a question about health, medication, symptoms or care, or a follow-up of one',
  fresh_each_time: 'a request for something new each time — a joke, a riddle, a story, a tale, a song, a poem, an anecdote: asked again, it wants another',
  follow_up_without_context: 'a follow-up with no exchange before it: nothing to key it by',
  not_completed: 'a reply the agent did not complete: the SOS line, the neutral line, an error, an empty reply',
  interrupted: 'a reply interrupted (barge-in, a kiosk that disconnects, an abort) or cut by a bound',
  tool_use: 'a reply that used the search_memory tool: it depends on what memory held then',
} as const;
export type NeverCached = keyof typeof NEVER_CACHED;

/** What is wanted new each time it is asked (accent-folded, as normalizeQuestion gives it): « une histoire », not « l'histoire de France ». */
const FRESH = /\b(blagues?|devinettes?|charades?|histoires? droles?|une histoire|des histoires|contes?|chansons?|chante|chanter|chantez|poemes?|poesies?|anecdotes?)\b/;

/** Why a question is kept out of the cache (neither served nor stored), or null. */
export function questionRefusal(question: string, previous: { question: string } | null): Extract<NeverCached, 'health' | 'fresh_each_time' | 'follow_up_without_context'> | null {
  if (isHealthQuestion(question)) return 'health';
  if (FRESH.test(normalizeQuestion(question))) return 'fresh_each_time';
  if (!isFollowUp(question)) return null;
  // « et le soir ? » after « je prends mon cachet le matin ? » is about health too.
  if (!previous) return 'follow_up_without_context';
  return isHealthQuestion(previous.question) ? 'health' : null;
}

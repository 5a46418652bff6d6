/**
 * Whether a turn asks on its own or answers what the companion just said. « Oui. », « Non merci. », « Pas
 * trop. », « Ma fille. » mean nothing without the question before them: the reply to « Oui. » after « Voulez-
 * vous une histoire ? » must never be served after « Avez-vous bien dormi ? ». Such a turn is keyed by the
 * exchange before it, as a follow-up is (machines/cache/question-details.ts `isFollowUp`).
 */
import { QUESTION_WORDS } from '../french/lexicon.ts';
import { normalizeQuestion } from '../french/words.ts';

/** The question words folded, as the turn is (« où » folds to « ou », « or »: WHERE reads it as said). */
const ASKING_WORDS = Object.keys(QUESTION_WORDS).map(normalizeQuestion).filter((w) => w !== 'ou');
/** A question word, « est-ce que », or a request (« tu peux », « je voudrais »). */
const ASKS = new RegExp(
  `\\b(${[...ASKING_WORDS, 'est ce que', 'est ce qu', 'tu peux', 'vous pouvez', 'peux tu', 'pouvez vous', 'tu pourrais', 'pourrais tu', 'vous pourriez', 'pourriez vous', 'tu veux bien', 'je voudrais', 'j aimerais', 'je veux'].join('|')})\\b`,
);
const WHERE = /(?<![\p{L}])où(?![\p{L}])/iu;
/** An imperative with its « moi » (« raconte-moi », « dis-moi », « lis-nous »): the senior's own request. */
const REQUEST = /\p{L}-(moi|nous)(?![\p{L}])/iu;
/** An inverted subject (« fait-il », « vient-elle ») asks. */
const INVERTED = /\p{L}-(t-)?(je|tu|il|elle|on|nous|vous|ils|elles)(?![\p{L}-])/iu;

/** A turn that neither asks nor requests: it answers, or remarks on, the exchange before it. */
export function answersThePrevious(turn: string): boolean {
  if (turn.includes('?') || WHERE.test(turn) || REQUEST.test(turn) || INVERTED.test(turn)) return false;
  return !ASKS.test(normalizeQuestion(turn));
}

/**
 * The `strict` profile's key: one question's words once everything French lets a speaker vary without
 * changing the question is normalized — case, hesitations, polite frames, « est-ce que », the inverted
 * subject, a question word left where it was asked, a day said first. Two questions with the same key are
 * the same question by construction: no similarity, no threshold. Every rule only removes or moves words
 * that carry no meaning where they stand. What may carry meaning stays: punctuation inside the question
 * (« On mange, Mamie ? » is not « On mange Mamie ? »), quotation marks, a closing « ! », and accents: a
 * question typed without them (« ou est le marche ») is another key, since « jeune » / « jeûne », « sale » /
 * « salé », « passe » / « passé » are each two words and no closed list can tell every such pair.
 */
import { CALENDAR_WORDS, QUESTION_WORDS } from '../french/lexicon.ts';
import { CLITICS, HESITATIONS, SUBJECT_PRONOUNS } from '../french/word-classes.ts';

/** Elided words in their full form, so that « est-ce qu'il » reads as « est-ce que il ». */
const ELIDED: Record<string, string> = { c: 'ce', j: 'je', qu: 'que', n: 'ne', m: 'me', t: 'te', d: 'de', s: 'se' };

const BOUNDARY = ',';
const STOP = '.';
const QUOTE = '"';
const EXCLAIMED = '‼';
const isBreak = (w: string | undefined) => w === BOUNDARY || w === STOP;

/** Said while looking for a word: never part of the question (a capitalised « Ben » inside a sentence is a name). */
const FILLERS = new Set(HESITATIONS);
/** Said to open a question, before a comma: « Bon, », « Alors, », « Dis, », « Écoute, ». */
const OPENERS = [['bon'], ['alors'], ['ah'], ['oh'], ['eh'], ['eh', 'bien'], ['dis'], ['dites'], ['dis', 'donc'], ['écoute'], ['écoutez'], ['tiens'], ['voyons'], ['pardon'], ['excuse', 'moi'], ['excusez', 'moi'], ['au', 'fait']];
/** Said to close a question, after a comma: « …, hein ? », « …, tu sais ? », « …, s'il te plaît ». */
const TAGS = [['hein'], ['dis'], ['dis', 'moi'], ['tu', 'sais'], ['vous', 'savez'], ['merci'], ['non']];
/** Polite words, never part of a question: removed at its start, its end, or between two breaks (never inside quotation marks). */
const POLITE = [['si', 'il', 'te', 'plaît'], ['si', 'il', 'vous', 'plaît'], ['stp'], ['svp']];
/**
 * Frames that ask for the question they open, and nothing else: removed only before a question word or « si »
 * and a clause (« dis-moi quand elle vient » is « quand elle vient ? »; « je voudrais savoir nager » keeps them).
 */
const FRAMES = [
  ['dis', 'moi'], ['dites', 'moi'], ['tu', 'sais'], ['vous', 'savez'], ['tu', 'peux', 'me', 'dire'], ['vous', 'pouvez', 'me', 'dire'], ['tu', 'pourrais', 'me', 'dire'],
  ['vous', 'pourriez', 'me', 'dire'], ['tu', 'veux', 'bien', 'me', 'dire'], ['je', 'voudrais', 'savoir'], ['je', 'aimerais', 'savoir'], ['je', 'veux', 'savoir'], ['je', 'me', 'demande'],
];

/** Words that ask: a question word, or « quel » and the noun it asks about. */
const ASKING = new Set(Object.keys(QUESTION_WORDS));
/** Prepositions a question word takes along: « à quelle heure », « avec qui », « depuis quand ». */
const ASKED_AFTER = new Set(['à', 'de', 'pour', 'avec', 'chez', 'depuis', 'dans', 'en', 'vers', 'par', 'jusque', 'sur', 'sous']);
const QUEL = new Set(['quel', 'quelle', 'quels', 'quelles']);
/** Words that open a second clause: a question word after one asks there, not in the main clause. */
const CLAUSE = new Set(['que', 'qui', 'si', 'quand', 'où', 'lorsque', 'parce', 'comme', 'et', 'ou', 'mais', 'dont', 'puisque']);
/** Clitics said between an inverted subject's place and its verb: « il y a », « tu te souviens », « il ne vient pas ». */
const PRECLITICS = new Set(CLITICS);
const SUBJECTS = new Set([...SUBJECT_PRONOUNS.filter((p) => p !== 'j'), 'ce']);

/**
 * The words as said, lower case, with « , » where a comma, semicolon, colon, dash, ellipsis or parenthesis stood,
 * « . » where a sentence ended inside the question, « " » for quotation marks, and the inverted subject marked « @il ».
 */
function tokens(question: string): string[] {
  const text = question
    .normalize('NFC')
    .toLowerCase()
    .replace(/[’`´]/g, "'")
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae')
    // « qu'est-ce que » asks what, « qu'est-ce qui » what as the subject; « est-ce que », « est-ce qui » after « qui » ask nothing.
    .replace(/(?<![\p{L}])qu'est-ce qu(?:e |')/gu, ' quoi ')
    .replace(/(?<![\p{L}])qu'est-ce qui(?![\p{L}])/gu, ' quoi_sujet ')
    .replace(/(?<![\p{L}])est-ce qu(?:e |'|e$)/gu, ' ')
    .replace(/(?<=(?<![\p{L}])qui )est-ce qui(?![\p{L}])/gu, ' ')
    // The subject inverted after its verb (« fait-il », « a-t-elle », « est-ce ») is marked, then moved back.
    .replace(/([\p{L}]+)-(?:t-)?(je|tu|il|elle|on|nous|vous|ils|elles|ce)(?![\p{L}'-])/gu, (_, verb: string, subject: string) => ` ${verb} @${subject} `)
    .replace(/[«»"“”]/g, ` ${QUOTE} `)
    .replace(/!+\s*$/u, ` ${EXCLAIMED}`)
    .replace(/[,;:…()–—]/g, ` ${BOUNDARY} `)
    .replace(/[.?!]+/g, ` ${STOP} `)
    .replace(/-/g, ' ')
    .replace(/'/g, "' ");
  const raw = text.split(/\s+/).filter((r) => r !== '');
  return raw.map((r, i) => {
    if (r.startsWith('@')) return r;
    if (!r.endsWith("'")) return r;
    const elided = r.slice(0, -1);
    // « s'il », « s'ils » is « si il »; any other « s' » the reflexive « se ».
    if (elided === 's' && /^ils?$/.test(raw[i + 1] ?? '')) return 'si';
    return ELIDED[elided] ?? elided;
  });
}

const startsWith = (words: readonly string[], at: number, phrase: readonly string[]) => phrase.every((w, k) => words[at + k] === w);

/** Polite words at the start, at the end, or between two breaks: never inside a quotation (« comment on dit "s'il te plaît" »). */
function withoutPolite(words: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; ) {
    const phrase = POLITE.find((p) => startsWith(words, i, p));
    const end = i + (phrase?.length ?? 0);
    if (phrase && (i === 0 || isBreak(out.at(-1)) || end === words.length || isBreak(words[end]))) i = end;
    else out.push(words[i++]!);
  }
  return out;
}

/** Hesitations anywhere, but a capitalised one inside the sentence (« avec Ben ») is a name. */
function withoutFillers(words: string[], said: string): string[] {
  const names = new Set([...said.matchAll(/(?<=\p{L}[^.?!]*\s)(\p{Lu}\p{Ll}+)/gu)].map((m) => m[1]!.toLowerCase()));
  return words.filter((w) => !FILLERS.has(w) || names.has(w));
}

const trimmed = (words: string[]) => {
  let [from, to] = [0, words.length];
  while (from < to && isBreak(words[from])) from += 1;
  while (to > from && isBreak(words[to - 1])) to -= 1;
  return words.slice(from, to);
};

/** Openers at the start before a break, tags at the end after one, and the breaks left at either end. */
function withoutOpenersAndTags(words: string[]): string[] {
  let w = trimmed(words);
  for (let changed = true; changed; w = trimmed(w)) {
    changed = false;
    const opener = OPENERS.find((p) => startsWith(w, 0, p) && isBreak(w[p.length]));
    if (opener) {
      w = w.slice(opener.length + 1);
      changed = true;
    }
    const tag = TAGS.find((p) => w.length > p.length + 1 && startsWith(w, w.length - p.length, p) && isBreak(w[w.length - p.length - 1]));
    if (tag) {
      w = w.slice(0, w.length - tag.length - 1);
      changed = true;
    }
    // « …, déjà ? » or « … quand déjà ? » in a question that asks what, when, where…: a recall tag.
    if (w.at(-1) === 'déjà' && w.some((x) => ASKING.has(x)) && (isBreak(w.at(-2)) || ASKING.has(w.at(-2) ?? ''))) {
      w = w.slice(0, -1);
      changed = true;
    }
  }
  return w;
}

/**
 * A frame that only asks for the question after it, at the start, before a question word or « si » and a
 * clause (« dis-moi quand elle vient » is « quand elle vient ? »; « tu sais quoi ? », « je voudrais savoir
 * nager » keep it).
 */
function withoutFrame(words: string[]): string[] {
  const frame = FRAMES.find((p) => startsWith(words, 0, p));
  if (!frame) return words;
  let rest = words.slice(frame.length);
  if (rest[0] === BOUNDARY) rest = rest.slice(1);
  if (rest.length < 2) return words;
  if (rest[0] === 'si') return rest.slice(1);
  // « dis-moi ce que tu fais » asks « qu'est-ce que tu fais ».
  if (rest[0] === 'ce' && rest[1] === 'que') return ['quoi', ...rest.slice(2)];
  return ASKING.has(rest[0]!) ? rest : words;
}

/** « fait @il » → « il fait », « y a @il » → « il y a », « ne vient @il pas » → « il ne vient pas ». */
function uninverted(words: string[]): string[] {
  const out = [...words];
  for (let i = 0; i < out.length; i++) {
    if (!out[i]!.startsWith('@')) continue;
    const subject = out[i]!.slice(1);
    let start = i - 1;
    while (start > 0 && PRECLITICS.has(out[start - 1]!)) start -= 1;
    out.splice(i, 1);
    out.splice(start, 0, subject);
  }
  return out;
}

/**
 * A question word asked where its answer stands (« tu fais quoi », « elle vient quand », « il fait quel
 * temps ») said first, as the fronted question says it (« que fais-tu », « quand vient-elle » after
 * inversion: « quoi tu fais », « quand elle vient »). Only in a question of one clause with one question
 * word and no break: elsewhere a « quand », « où » may open a clause of its own.
 */
function fronted(words: string[]): string[] {
  // The fronted « que » asking what (« que fais-tu ») is « quoi » (« tu fais quoi »).
  const w = words[0] === 'que' && SUBJECTS.has(words[1] ?? '') ? ['quoi', ...words.slice(1)] : words;
  const asking = w.flatMap((x, i) => (ASKING.has(x) ? [i] : []));
  if (asking.length !== 1 || w.some((x, i) => i !== asking[0] && (CLAUSE.has(x) || isBreak(x) || x === QUOTE))) return w;
  const at = asking[0]!;
  // « quel » takes its noun along (« quel temps », « quelle heure »); a preposition before it too (« à quelle heure »).
  const end = QUEL.has(w[at]!) ? at + 2 : at + 1;
  const from = ASKED_AFTER.has(w[at - 1] ?? '') ? at - 1 : at;
  if (from === 0) return w;
  return [...w.slice(from, end), ...w.slice(0, from), ...w.slice(end)];
}

/**
 * When said first, as said last: « demain il va neiger » is « il va neiger demain ». Only the day and its
 * parts, before a whole clause (a subject or « il y a » follows), never a date or an hour whose place may
 * tell what it is about.
 */
const DAYS = CALENDAR_WORDS.split(' ').slice(0, 7);
const WHEN = [
  ...['aujourd hui', 'demain', 'hier', 'après demain', 'avant hier', 'ce matin', 'ce midi', 'ce soir', 'cette nuit', 'cet après midi', 'ce week end', 'cette semaine', 'la semaine prochaine', 'tout à l heure', 'maintenant'],
  ...DAYS,
  ...DAYS.flatMap((d) => [`${d} prochain`, `ce ${d}`]),
]
  .map((p) => p.split(' '))
  .sort((a, b) => b.length - a.length);
const CLAUSE_START = new Set([...SUBJECTS, 'ma', 'mon', 'mes', 'le', 'la', 'les', 'l']);
function whenLast(words: string[]): string[] {
  const when = WHEN.find((p) => startsWith(words, 0, p));
  if (!when) return words;
  const at = words[when.length] === BOUNDARY ? when.length + 1 : when.length;
  return CLAUSE_START.has(words[at] ?? '') && !words.slice(at).some((x) => isBreak(x) || x === QUOTE) ? [...words.slice(at), ...when] : words;
}

/** A function word said twice while looking for the next one (« je je voudrais », « le le facteur »). */
const STUTTERED = new Set(['je', 'tu', 'il', 'elle', 'on', 'le', 'la', 'les', 'un', 'une', 'de', 'des', 'du', 'à', 'au', 'mon', 'ma', 'mes', 'et', 'est', 'que']);
const unstuttered = (words: string[]) => words.filter((w, i) => !(STUTTERED.has(w) && words[i - 1] === w));

/** The strict key of a question: equal keys, the same question. */
export function strictKey(question: string): string {
  let w = unstuttered(withoutFillers(tokens(question), question));
  // A closing « ! » exclaims (« Suis-je bête ! »): kept, after the tags it closes.
  const exclaimed = w.at(-1) === EXCLAIMED;
  if (exclaimed) w = w.slice(0, -1);
  w = withoutFrame(withoutOpenersAndTags(withoutPolite(w)));
  w = fronted(whenLast(uninverted(w)));
  return [...w, ...(exclaimed ? [EXCLAIMED] : [])].join(' ');
}

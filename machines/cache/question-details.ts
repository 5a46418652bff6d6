/**
 * The details two questions must share before one's cached answer may serve the other.
 * Embeddings — lexical or semantic — score « Quel temps fera-t-il demain ? » and « … samedi ? »,
 * « ma fille » and « mon fils », « j'ai pris » and « je n'ai pas pris » as near-identical;
 * serving one for the other is the false hit nobody notices. Cheap: regexes, no model. Content
 * words, names included, are the content-word guard's (machines/cache/content-words.ts).
 */
import { AVOIR_PRESENT, DEFINITE_ARTICLES, DEMONSTRATIVES, INDEFINITE_ARTICLES, POSSESSIVES } from '../french/word-classes.ts';
import { normalizeQuestion } from '../french/words.ts';

export interface QuestionDetails {
  numbers: string[];
  /** Days, relative days, parts of the day, months, dates. */
  when: string[];
  times: string[];
  /** Kinship and roles with their possessive (« ma fille », « mon médecin »). */
  people: string[];
  places: string[];
  negated: boolean;
  /** How many negations: « je ne sais plus si j'ai fermé » is not « je ne sais plus si je n'ai pas fermé ». */
  negations: number;
  /** Titles before a name: « Monsieur Dupont » is not « Madame Dupont ». */
  titles: string[];
  /** How many are meant: « tout manger » is not « manger », « tous mes amis » not « quelques amis ». */
  quantifiers: string[];
  /**
   * A time counted from now, with its direction: « dans une semaine » (+), « il y a une semaine » (−),
   * « depuis une semaine » / « ça fait une semaine » (since): « + 1 semaine », « - 1 semaine ».
   */
  relative: string[];
  /** Comparisons, in the order said: « plus », « moins », « aussi … que », « mieux », « pire » (« plus fort » is not « fort »). */
  comparisons: string[];
  /** Aspect adverbs, said or not: « le chat a mangé ? » is not « le chat a déjà mangé ? » (already, still, finally, soon, often, sometimes). */
  aspects: string[];
}

export const NUMBER_WORDS: Record<string, string> = {
  zero: '0', un: '1', une: '1', deux: '2', trois: '3', quatre: '4', cinq: '5', six: '6', sept: '7', huit: '8', neuf: '9', dix: '10',
  onze: '11', douze: '12', treize: '13', quatorze: '14', quinze: '15', seize: '16', vingt: '20', trente: '30', quarante: '40',
  cinquante: '50', soixante: '60', cent: '100', mille: '1000', premier: '1', premiere: '1', deuxieme: '2', troisieme: '3',
};
const WHEN = [
  'lundi', 'mardi', 'mercredi', 'jeudi', 'vendredi', 'samedi', 'dimanche', 'aujourd hui', 'demain', 'apres demain', 'hier', 'avant hier',
  'ce matin', 'cet apres midi', 'ce soir', 'cette nuit', 'demain matin', 'demain soir', 'matin', 'soir', 'apres midi', 'nuit', 'week end', 'semaine prochaine', 'mois prochain',
  'annee prochaine', 'semaine derniere', 'janvier', 'fevrier', 'mars', 'avril', 'mai', 'juin', 'juillet', 'aout', 'septembre', 'octobre',
  'novembre', 'decembre', 'noel', 'paques', 'anniversaire',
];
export const KIN = [
  'fille', 'fils', 'mari', 'femme', 'epoux', 'epouse', 'soeur', 'frere', 'mere', 'pere', 'maman', 'papa', 'petit fils', 'petite fille',
  'petits enfants', 'enfants', 'gamins', 'gosses', 'neveu', 'niece', 'cousin', 'cousine', 'oncle', 'tante', 'voisin', 'voisine', 'ami', 'amie', 'medecin',
  'docteur', 'infirmier', 'infirmiere', 'kine', 'aide soignante', 'aide menagere', 'pharmacien', 'pharmacienne', 'dentiste',
];
/** Two words for one person: « mon médecin » is « mon docteur ». */
export const KIN_SAME: Record<string, string> = { docteur: 'medecin', maman: 'mere', papa: 'pere', epoux: 'mari', epouse: 'femme', gamins: 'enfants', gosses: 'enfants' };
const PLACES = [
  'pharmacie', 'hopital', 'marche', 'boulangerie', 'mairie', 'eglise', 'cimetiere', 'poste', 'banque', 'supermarche', 'jardin', 'cuisine',
  'chambre', 'salon', 'cave', 'garage', 'parc', 'plage', 'gare', 'club', 'cabinet', 'maison de retraite', 'ehpad',
];
// Possessives only: « le médecin » and « au médecin » are the same person.
const POSSESSIVE_PATTERNS = new Map(KIN.map((kin) => [kin, new RegExp(`(?:^| )(${POSSESSIVES.join('|')}) ${kin}(?: |$)`)]));
// « ne » and its particle hold the verb and up to two clitics between them (« ne me fait plus »).
const NEGATION = /\b(ne|n)\s+(?:\S+\s+){1,3}?(pas|plus|jamais|rien|personne|aucun|aucune|guere)\b|\b(pas|jamais|aucun|aucune|rien)\b/;
const NEGATIONS = new RegExp(NEGATION.source, 'g');

/** Titles, each its own detail; « maître » is a lawyer's or notary's (« docteur » is a person, above). */
const TITLES: Record<string, string> = { monsieur: 'monsieur', messieurs: 'monsieur', madame: 'madame', mesdames: 'madame', mademoiselle: 'mademoiselle', maitre: 'maitre', professeur: 'professeur', abbe: 'abbe', cure: 'cure' };
/**
 * Quantifiers by what they mean: all (« tout », « tous », « chaque »: « tous les jours » is « chaque
 * jour »), some (« quelques », « plusieurs », « certains »), someone. « tout » is no quantifier in an
 * idiom (« tout de suite », « tout à l'heure », « pas du tout ») nor as an adverb (« tout seul », « tout près »).
 */
const QUANTIFIERS: Record<string, string> = { tout: 'all', toute: 'all', tous: 'all', toutes: 'all', chaque: 'all', quelques: 'some', quelque: 'some', plusieurs: 'some', certains: 'some', certaines: 'some' };
const NOT_A_QUANTITY = /\b(?:tout (?:a l heure|de suite|a fait|de meme|a coup|pres|droit|doux|neuf|juste|simplement|doucement|bas|haut|court|seule?s?|petite?s?)|(?:du|en|apres|malgre) tout|quelque chose|quelque part|tout le temps)\b/g;
const SOMEONE = /\bquelqu un\b/;

const wordPattern = (phrase: string) => new RegExp(`(^| )${phrase}( |$)`);
/** Compiled once: a lookup runs these on every question. */
const PATTERNS = new Map([...WHEN, ...KIN, ...PLACES].map((p) => [p, wordPattern(p)]));

/** The listed phrases found in `text`, a phrase inside a longer one found dropped (« fille » in « petite fille »). */
function phrases(text: string, list: readonly string[]): string[] {
  const found = list.filter((p) => PATTERNS.get(p)!.test(text));
  return found.filter((p) => !found.some((q) => q !== p && q.length > p.length && PATTERNS.get(p)!.test(q)));
}

export function questionDetails(question: string): QuestionDetails {
  const text = normalizeQuestion(question);
  const words = text.split(' ');
  const times = [...text.matchAll(/\b(\d{1,2})\s?(?:h|heures?|:)\s?(\d{2})?\b/g)].map((m) => `${Number(m[1])}:${m[2] ?? '00'}`);
  if (/(?<!apres )\bmidi\b/.test(text)) times.push('12:00'); // not « après-midi », a part of the day
  if (/\bminuit\b/.test(text)) times.push('0:00');
  // « un » and « une » are articles far more often than numbers: only a digit or another word counts.
  const numbers = (/\d/.test(text) ? text.replace(/\b\d{1,2}\s?(?:h|heures?|:)\s?\d{0,2}\b/g, ' ').split(' ') : words)
    .map((w) => (/^\d+$/.test(w) ? w : w === 'un' || w === 'une' ? undefined : NUMBER_WORDS[w]))
    .filter((n): n is string => n !== undefined);
  // « j'ai coupé le gaz ou pas ? » asks « j'ai coupé le gaz ? »: its « pas » negates nothing.
  const asserted = text.replace(/ ou (?:pas|non)$/, '');
  const negated = NEGATION.test(asserted);
  // Names (« Claire » / « Sophie ») are content words: the content-word guard compares them.
  const people = phrases(text, KIN).map((kin) => {
    const before = POSSESSIVE_PATTERNS.get(kin)!.exec(text);
    const same = KIN_SAME[kin] ?? kin;
    return before ? `${before[1]} ${same}` : same;
  });
  return {
    // In the order said: « trois chats et deux chiens » is not « deux chats et trois chiens ».
    numbers: [...new Set(numbers)],
    when: phrases(text, WHEN).sort(),
    times: [...new Set(times)].sort(),
    people: [...new Set(people)].sort(),
    // « marché » folds to « marche » (« je marche »): the place keeps its accent.
    places: phrases(text, PLACES).filter((p) => p !== 'marche' || /marché/i.test(question)).sort(),
    negated,
    negations: negated ? (asserted.match(NEGATIONS)?.length ?? 0) : 0,
    titles: [...new Set(words.map((w) => TITLES[w]).filter((t): t is string => t !== undefined))].sort(),
    quantifiers: quantifiers(text),
    relative: relativeTimes(text),
    comparisons: comparisons(text),
    aspects: aspects(text, question),
  };
}

/**
 * Aspect adverbs by what they mean: « déjà » (already), « encore », « toujours » (still, again: one sense
 * in a question — « il pleut encore ? » / « il pleut toujours ? »), « enfin » (finally), « bientôt » (soon),
 * « souvent » (often), « parfois », « quelquefois » (sometimes); SPOKEN_PHRASES reads « de nouveau », « à
 * nouveau » as « encore » and « de temps en temps » as « parfois ». Where they carry no meaning they are left
 * out: « déjà » as a recall tag in a question that asks « what », « when »… (« c'est quand, déjà ? », « il
 * s'appelle comment, déjà ? ») unless it stands between an auxiliary and its participle (« qui a déjà
 * mangé ? »); « enfin » or « déjà » opening the question before a comma (« Enfin, tu viens ? », « Déjà, il
 * fait froid », interjections); « à bientôt ».
 */
const ASPECT = /\b(deja|encore|toujours|enfin|bientot|souvent|parfois|quelquefois)\b/g;
const ASPECT_OF: Record<string, string> = { deja: 'already', encore: 'still', toujours: 'still', enfin: 'finally', bientot: 'soon', souvent: 'often', parfois: 'sometimes', quelquefois: 'sometimes' };
const WH = /\b(ou|quand|comment|pourquoi|combien|qui|quoi|quel|quelle|quels|quelles|lequel|laquelle)\b|\bqu est ce\b/;
const AUXILIARY_DEJA = /\b(?:ai|as|a|avons|avez|ont|suis|es|est|sommes|etes|sont|avais|avait|etait|etais) (?:t (?:il|elle|on) |tu |vous |il |elle |on )?deja\b/;
const OPENER = /^\s*(?:enfin|d[ée]j[àa])\s*,/iu;
function aspects(text: string, question: string): string[] {
  if (!/\b(deja|encore|toujours|enfin|bientot|souvent|parfois|quelquefois)\b/.test(text)) return [];
  const recall = WH.test(text) && !AUXILIARY_DEJA.test(text);
  const found = new Set<string>();
  for (const m of text.replace(OPENER.test(question) ? /^\S+/ : /\ba bientot\b/, ' ').replace(/\ba bientot\b/, ' ').matchAll(ASPECT)) if (!(m[1] === 'deja' && recall)) found.add(ASPECT_OF[m[1]!]!);
  return [...found].sort();
}

/**
 * « tout » counts what follows a determiner or a verb (« tout le journal », « j'ai tout mangé »,
 * « je dois tout manger », « tout est prêt », « c'est tout »); before an adjective it only
 * intensifies (« un ciel tout gris », « toute seule »).
 */
const TOUT_BEFORE = new Set([...DEFINITE_ARTICLES, ...INDEFINITE_ARTICLES.filter((a) => a !== 'des'), ...DEMONSTRATIVES, ...POSSESSIVES, 'est', 'va', 'sera', 'etait', 'ca', 'cela', 'ce', 'fini', 'compris', 'pret', 'prets']);
const TOUT_AFTER = new Set([...AVOIR_PRESENT, 'avait', 'dois', 'doit', 'devez', 'faut', 'faudra', 'faudrait', 'peux', 'peut', 'pouvez', 'veux', 'veut', 'voulez', 'c', 'mange', 'manger', 'ranger', 'range', 'fait', 'faire']);
const ANY_QUANTIFIER = /\b(?:toute?s?|tous|chaque|quelques?|plusieurs|certaine?s|quelqu)\b/;
function quantifiers(text: string): string[] {
  const most = superlatives(text);
  if (!ANY_QUANTIFIER.test(text)) return most;
  const words = text.replace(NOT_A_QUANTITY, ' ').split(' ');
  const found = new Set(
    words
      .filter((w, i) => !/^toute?$/.test(w) || TOUT_BEFORE.has(words[i + 1] ?? 'ca') || TOUT_AFTER.has(words[i - 1] ?? '') || /(er|ir|re|oir)$/.test(words[i + 1] ?? ''))
      .map((w) => QUANTIFIERS[w])
      .filter((q): q is string => q !== undefined),
  );
  if (SOMEONE.test(text)) found.add('someone');
  for (const m of most) found.add(m);
  return [...found].sort();
}

/**
 * A time counted from now has a direction the embedding cannot see: « dans une semaine » (ahead),
 * « il y a une semaine » (back), « depuis une semaine », « ça fait une semaine » (since). « un », « une »
 * before a unit count one; « quelques », « plusieurs » keep their word.
 */
const UNITS: Record<string, string> = { minute: 'minute', minutes: 'minute', heure: 'heure', heures: 'heure', jour: 'jour', jours: 'jour', semaine: 'semaine', semaines: 'semaine', mois: 'mois', an: 'an', ans: 'an', annee: 'an', annees: 'an', quinzaine: 'quinzaine', siecle: 'siecle', siecles: 'siecle' };
const RELATIVE = new RegExp(`\\b(dans|il y a|y a t il|depuis|ca fait|cela fait|voila)\\s+(?:(\\d+|${Object.keys(NUMBER_WORDS).join('|')}|quelques|plusieurs|bientot)\\s+)?(${Object.keys(UNITS).join('|')})\\b`, 'g');
const DIRECTION: Record<string, string> = { dans: '+', 'il y a': '-', 'y a t il': '-', depuis: 'since', 'ca fait': 'since', 'cela fait': 'since', voila: 'since' };
function relativeTimes(text: string): string[] {
  if (!/\b(dans|y a|depuis|fait|voila)\b/.test(text)) return [];
  return [...new Set([...text.matchAll(RELATIVE)].map((m) => [DIRECTION[m[1]!], m[2] === undefined ? '' : (NUMBER_WORDS[m[2]] ?? m[2]), UNITS[m[3]!]].filter(Boolean).join(' ')))].sort();
}

/**
 * « plus » and « moins » that compare nothing: the negation « ne … plus » (« je n'en veux plus »),
 * « non plus », « en plus » / « de plus » (moreover), « au moins », « du moins », « à moins que »,
 * « plus ou moins », a clock's « moins le quart », and the idioms « tant mieux », « il vaut mieux ».
 */
const NOT_A_COMPARISON = /\b(?:(?:ne|n) (?:\S+ ){0,3}?plus|plus (?:jamais|rien|personne|aucune?)|non plus|(?:en|de) plus(?! en plus)|au plus tard|au moins|du moins|a moins|plus ou moins|moins (?:le quart|\d+|cinq|dix|vingt)|tant (?:mieux|pis)|(?:vaut|vaudrait|valait|vaudra) mieux)\b/g;
/** « le plus de », « la plus belle », « le moins », « le mieux », « la meilleure », « le pire »: the most of all, a quantifier. */
const SUPERLATIVE = /\b(?:le|la|les|l|du|au|aux) (plus|moins|mieux|meilleure?s?|pires?)\b/g;
const DEGREE: Record<string, string> = { plus: 'more', moins: 'less', mieux: 'better', meilleur: 'better', meilleure: 'better', meilleurs: 'better', meilleures: 'better', pire: 'worse', pires: 'worse' };
const SUPERLATIVE_OF: Record<string, string> = { more: 'most', less: 'least', better: 'best', worse: 'worst' };
const withoutIdioms = (text: string) => text.replace(/\bde plus en plus\b/g, 'plus').replace(NOT_A_COMPARISON, ' ');
function superlatives(text: string): string[] {
  if (!/\b(plus|moins|mieux|meilleure?s?|pires?)\b/.test(text)) return [];
  return [...new Set([...withoutIdioms(text).matchAll(SUPERLATIVE)].map((m) => SUPERLATIVE_OF[DEGREE[m[1]!]!]!))];
}
/** The comparisons left once superlatives and idioms are read; « aussi » compares only before a « que » (« aussi grand que »), else it is « also ». */
function comparisons(text: string): string[] {
  if (!/\b(plus|moins|mieux|meilleure?s?|pires?|aussi|autant)\b/.test(text)) return [];
  const rest = withoutIdioms(text).replace(SUPERLATIVE, ' ');
  const found: string[] = [];
  for (const m of rest.matchAll(/\b(plus|moins|mieux|meilleure?s?|pires?)\b|\b(?:aussi|autant)(?= (?:\S+ ){0,3}?(?:que|qu)\b)/g)) found.push(m[1] === undefined ? 'as' : DEGREE[m[1]]!);
  return found;
}

const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

const LISTS = ['numbers', 'when', 'times', 'people', 'places', 'titles', 'quantifiers', 'relative', 'comparisons', 'aspects'] as const;
/** The first detail that would change the answer and differs, by its field's name (« numbers »), or undefined when they all agree. */
export function detailsDisagreement(a: QuestionDetails, b: QuestionDetails): keyof QuestionDetails | undefined {
  for (const k of LISTS) if (!same(a[k], b[k])) return k;
  if (a.negated !== b.negated || a.negations !== b.negations) return 'negations';
  return undefined;
}
export const detailsAgree = (a: QuestionDetails, b: QuestionDetails): boolean => detailsDisagreement(a, b) === undefined;

const CONNECTOR = /^(et|mais|alors|donc|puis|ensuite|sinon|aussi)\b/;
const ANAPHORA = /\b(il|elle|ils|elles|lui|leur|eux|ca|cela|celui|celle|ceux|celles|la bas)\b/;
// The impersonal « il » (weather, time, « il y a », « il faut ») and the idioms « ça va », « comment ça » point back at nothing.
const IMPERSONAL_VERBS = 'fait|fera|faisait|pleut|pleuvra|neige|neigera|y a|y aura|y avait|faut|faudra|est|sera|etait|reste|va faire|va pleuvoir';
const IMPERSONAL = new RegExp(`\\bil (${IMPERSONAL_VERBS})\\b|\\b(${IMPERSONAL_VERBS}) (t )?il\\b|\\bca va\\b|\\bcomment ca\\b`, 'g');

/**
 * A question that leans on the previous exchange (« et elle, quel âge a-t-elle ? »): its
 * answer depends on that exchange, so a cached answer is keyed by it.
 */
export function isFollowUp(question: string): boolean {
  const text = normalizeQuestion(question).replace(IMPERSONAL, ' ');
  return CONNECTOR.test(text) || ANAPHORA.test(text);
}

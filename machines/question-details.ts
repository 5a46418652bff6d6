/**
 * The details two questions must share before one's cached answer may serve the other.
 * Embeddings — lexical or semantic — score « Quel temps fera-t-il demain ? » and « … samedi ? »,
 * « ma fille » and « mon fils », « j'ai pris » and « je n'ai pas pris » as near-identical;
 * serving one for the other is the false hit nobody notices. Cheap: regexes, no model.
 */
export interface QuestionDetails {
  numbers: string[];
  /** Days, relative days, parts of the day, months, dates. */
  when: string[];
  times: string[];
  /** Kinship and roles with their possessive (« ma fille », « mon médecin »), and capitalised names. */
  people: string[];
  places: string[];
  negated: boolean;
}

const NUMBER_WORDS: Record<string, string> = {
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
const KIN = [
  'fille', 'fils', 'mari', 'femme', 'epoux', 'epouse', 'soeur', 'frere', 'mere', 'pere', 'maman', 'papa', 'petit fils', 'petite fille',
  'petits enfants', 'enfants', 'neveu', 'niece', 'cousin', 'cousine', 'oncle', 'tante', 'voisin', 'voisine', 'ami', 'amie', 'medecin',
  'docteur', 'infirmier', 'infirmiere', 'kine', 'aide soignante', 'aide menagere', 'pharmacien', 'pharmacienne', 'dentiste',
];
const POSSESSIVES = ['ma', 'mon', 'mes', 'ta', 'ton', 'tes', 'sa', 'son', 'ses', 'notre', 'nos', 'votre', 'vos', 'leur', 'leurs', 'la', 'le', 'les'];
const PLACES = [
  'pharmacie', 'hopital', 'marche', 'boulangerie', 'mairie', 'eglise', 'cimetiere', 'poste', 'banque', 'supermarche', 'jardin', 'cuisine',
  'chambre', 'salon', 'cave', 'garage', 'parc', 'plage', 'gare', 'club', 'cabinet', 'maison de retraite', 'ehpad',
];
const POSSESSIVE_PATTERNS = new Map(KIN.map((kin) => [kin, new RegExp(`(?:^| )(${POSSESSIVES.join('|')}) ${kin}(?: |$)`)]));
const NEGATION = /\b(ne|n)\s+\S+\s+(pas|plus|jamais|rien|personne|aucun|aucune|guere)\b|\b(pas|jamais|aucun|aucune|rien)\b/;

/** Lower case, accents folded, apostrophes and hyphens as spaces: « aujourd'hui » → « aujourd hui ». */
export function normalizeQuestion(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae')
    .replace(/[’'`\-]/g, ' ')
    .replace(/[^\p{L}\p{N}:h\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const wordPattern = (phrase: string) => new RegExp(`(^| )${phrase}( |$)`);
/** Compiled once: a lookup runs these on every question. */
const PATTERNS = new Map([...WHEN, ...KIN, ...PLACES].map((p) => [p, wordPattern(p)]));

/** The listed phrases found in `text`, a phrase inside a longer one found dropped (« fille » in « petite fille »). */
function phrases(text: string, list: readonly string[]): string[] {
  const found = list.filter((p) => PATTERNS.get(p)!.test(text));
  return found.filter((p) => !found.some((q) => q !== p && q.length > p.length && PATTERNS.get(p)!.test(q)));
}

/** Words that start a sentence capitalised without naming anyone or anywhere. */
const NOT_NAMES = new Set(
  [
    'est ce quel quelle quels quelles quand ou combien comment pourquoi qui que qu quoi je j tu il elle on nous vous ils elles moi toi lui leur',
    'mon ma mes ton ta tes son sa ses notre nos votre vos le la les l un une des du de c cette cet ces et mais alors donc puis ensuite sinon aussi',
    'oui non bonjour bonsoir salut merci dis peux pouvez veux voulez sais savez connais faut y a ai as avez avons sont',
    'par pour en dans sur sous avec sans chez jusqu au aux apres avant depuis pendant vers entre si tout toute tous ici la maintenant encore deja',
    'toujours jamais bien tres trop peut etre voici voila',
  ]
    .join(' ')
    .split(' '),
);
const LEXICON = new Set([...WHEN, ...KIN, ...PLACES].flatMap((p) => p.split(' ')));

export function questionDetails(question: string): QuestionDetails {
  const text = normalizeQuestion(question);
  const words = text.split(' ');
  const times = [...text.matchAll(/\b(\d{1,2})\s?(?:h|heures?|:)\s?(\d{2})?\b/g)].map((m) => `${Number(m[1])}:${m[2] ?? '00'}`);
  if (/\bmidi\b/.test(text)) times.push('12:00');
  if (/\bminuit\b/.test(text)) times.push('0:00');
  const numbers = [
    ...(text.replace(/\b\d{1,2}\s?(?:h|heures?|:)\s?\d{0,2}\b/g, ' ').match(/\b\d+\b/g) ?? []),
    ...words.map((w) => NUMBER_WORDS[w]).filter((n): n is string => n !== undefined && !/^(un|une)$/.test(n)),
  ];
  // « un » and « une » are articles far more often than numbers: only a digit or another word counts.
  const people = [
    ...phrases(text, KIN).map((kin) => {
      const before = POSSESSIVE_PATTERNS.get(kin)!.exec(text);
      return before ? `${before[1]} ${kin}` : kin;
    }),
    // Capitalised words that are neither sentence openers nor lexicon words: names of people or places.
    ...question
      .split(/[\s,;:!?«»"()]+/)
      .filter((w) => /^\p{Lu}\p{Ll}+/u.test(w))
      .map((w) => normalizeQuestion(w).split(' ').at(-1)!)
      .filter((w) => w && !NOT_NAMES.has(w) && !LEXICON.has(w)),
  ];
  return {
    numbers: [...new Set(numbers)].sort(),
    when: phrases(text, WHEN).sort(),
    times: [...new Set(times)].sort(),
    people: [...new Set(people)].sort(),
    places: phrases(text, PLACES).sort(),
    negated: NEGATION.test(text),
  };
}

const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** True when the two questions agree on every detail that would change the answer. */
export function detailsAgree(a: QuestionDetails, b: QuestionDetails): boolean {
  return same(a.numbers, b.numbers) && same(a.when, b.when) && same(a.times, b.times) && same(a.people, b.people) && same(a.places, b.places) && a.negated === b.negated;
}

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

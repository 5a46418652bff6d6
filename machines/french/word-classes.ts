/**
 * French closed word classes, each listed once: determiners, pronouns and clitics, conjunctions,
 * prepositions, hesitations, the auxiliaries. Written folded (accents off, as machines/french/words.ts
 * folds them) except where an accent tells a word apart (« à », « êtes », « été »): prepositions,
 * conjunctions and the auxiliaries are read on the words as said. A caller that needs a narrower class
 * takes a named subset below, never a list of its own: each subset says why it is narrower, and keeps
 * the exact words its caller was calibrated with (a wider one changes some questions' signatures).
 */

export const DEFINITE_ARTICLES: readonly string[] = ['le', 'la', 'les', 'l'];
export const INDEFINITE_ARTICLES: readonly string[] = ['un', 'une', 'des'];
/** « de le », « à le », « à les » contracted. */
export const CONTRACTED_ARTICLES: readonly string[] = ['du', 'au', 'aux'];
/** The partitive and the bare « de » before a noun (« du pain », « pas de sucre », « d'eau »). */
export const PARTITIVES: readonly string[] = ['du', 'de', 'd'];
export const DEMONSTRATIVES: readonly string[] = ['ce', 'cet', 'cette', 'ces'];
export const POSSESSIVES: readonly string[] = ['mon', 'ma', 'mes', 'ton', 'ta', 'tes', 'son', 'sa', 'ses', 'notre', 'nos', 'votre', 'vos', 'leur', 'leurs'];
/** « leur » is also the object clitic (« je leur parle »): only these possessives always announce a noun. */
export const NOUN_ONLY_POSSESSIVES = POSSESSIVES.filter((p) => p !== 'leur');
export const QUANTIFYING_DETERMINERS: readonly string[] = ['quelques', 'plusieurs', 'chaque'];
export const INTERROGATIVE_DETERMINERS: readonly string[] = ['quel', 'quelle', 'quels', 'quelles'];

/**
 * Adjectives said before the noun (« une bonne soupe », « le petit chat »), folded: the singulars, the
 * forms before a vowel (« un bel arbre »), the plurals that differ, the comparatives. PRE_ADJECTIVES
 * (the content words and roles) reads the singulars, plurals and comparatives; SINGULAR_PRE_ADJECTIVES
 * (the homographs' gender reading) the singulars and the forms before a vowel.
 */
const PRE_NOMINAL = {
  singular: ['bon', 'bonne', 'petit', 'petite', 'grand', 'grande', 'beau', 'belle', 'vieux', 'vieille', 'nouveau', 'nouvelle', 'gros', 'grosse', 'joli', 'jolie', 'mauvais', 'mauvaise', 'premier', 'premiere', 'dernier', 'derniere', 'autre', 'meme', 'vrai', 'vraie'],
  beforeVowel: ['bel', 'vieil', 'nouvel'],
  plural: ['bons', 'bonnes', 'petits', 'petites', 'grands', 'grandes', 'beaux', 'belles', 'vieilles', 'nouveaux', 'nouvelles', 'jolis', 'jolies', 'grosses', 'autres'],
  comparative: ['meilleur', 'meilleure'],
};
export const PRE_ADJECTIVES: ReadonlySet<string> = new Set([...PRE_NOMINAL.singular, ...PRE_NOMINAL.plural, ...PRE_NOMINAL.comparative]);
export const SINGULAR_PRE_ADJECTIVES: ReadonlySet<string> = new Set([...PRE_NOMINAL.singular, ...PRE_NOMINAL.beforeVowel]);

/** Articles, contracted articles, demonstratives and possessives: a noun (or its adjective) follows. */
export const DETERMINERS: ReadonlySet<string> = new Set([...DEFINITE_ARTICLES, ...INDEFINITE_ARTICLES, ...CONTRACTED_ARTICLES, ...DEMONSTRATIVES, ...POSSESSIVES]);
/** DETERMINERS but the object-clitic « leur », with the quantifiers and « de »: the word after one is a noun, never a verb. */
export const DETERMINERS_OF_NOUNS: ReadonlySet<string> = new Set([...DETERMINERS].filter((d) => d !== 'leur').concat(QUANTIFYING_DETERMINERS, PARTITIVES));
/** The articles and partitives only: answer-neutral before an adjective (« un bon vin », « du bon pain »). */
export const ARTICLES: ReadonlySet<string> = new Set([...INDEFINITE_ARTICLES, ...DEFINITE_ARTICLES, ...PARTITIVES]);

export const SUBJECT_PRONOUNS: readonly string[] = ['je', 'j', 'tu', 'il', 'elle', 'on', 'nous', 'vous', 'ils', 'elles'];
/** Subject pronouns that are also stressed ones (« avec elle », « chez nous », « pour vous »): a sentence may end on them. */
export const STRESSED_TOO: readonly string[] = ['elle', 'elles', 'nous', 'vous'];
/** The subjects other than the one asked (« tu », « vous »): someone the question is about. */
export const SUBJECTS_NOT_ADDRESSED: ReadonlySet<string> = new Set(SUBJECT_PRONOUNS.filter((p) => p !== 'tu' && p !== 'vous'));
/** « ça », « cela », « c' » as subjects (« ça m'a plu », « c'est »). */
export const DEMONSTRATIVE_SUBJECTS: readonly string[] = ['ca', 'cela', 'c'];
/** Object and reflexive clitics with the negation « ne », the words between a subject and its verb. */
export const CLITICS: readonly string[] = ['ne', 'n', 'me', 'm', 'te', 't', 'se', 's', 'lui', 'nous', 'vous', 'leur', 'y', 'en', 'le', 'la', 'l', 'les'];

/** Clitics said only before a verb (« je », « il », « me », « ne »), never after it as « lui », « y », « en », « le » are (« donne-le »). */
export const PROCLITICS: readonly string[] = [...SUBJECT_PRONOUNS.filter((p) => !STRESSED_TOO.includes(p)), 'me', 'm', 'te', 't', 'se', 's', 'ne', 'n'];

/** Conjunctions and relatives, as said (« c'est-à-dire » keeps its hyphens). */
export const CONJUNCTIONS: readonly string[] = ['et', 'mais', 'ou', 'donc', 'or', 'ni', 'car', 'puis', 'que', 'qui', 'quand', 'lorsque', 'si', 'comme', 'puisque', 'parce', 'dont', 'alors', 'est-à-dire'];

/** Hesitations and fillers a speaker says while looking for the next word. */
export const HESITATIONS: readonly string[] = ['euh', 'euhm', 'heu', 'hum', 'hmm', 'mmh', 'mh', 'ben', 'bah'];

/** Prepositions, as said (« à » is not « a »); the contracted « au », « aux », « du » are CONTRACTED_ARTICLES. */
export const PREPOSITIONS: readonly string[] = ['de', 'à', 'pour', 'avec', 'chez', 'dans', 'sur', 'sous', 'par', 'en', 'vers', 'sans', 'entre', 'contre', 'pendant', 'selon', 'malgré', 'parmi', 'durant', 'envers'];

/**
 * Before « le », « la », « les », « l' » these make it an object pronoun (« je la range »), not an article.
 * BEFORE_CLITIC_OR_CA adds « ça » (« ça la fatigue ») for the homographs' gender reading; the content
 * words' noun position keeps the list without it (with it, some questions' signatures change).
 */
export const BEFORE_CLITIC: ReadonlySet<string> = new Set([...SUBJECT_PRONOUNS, 'ne', 'n', 'me', 'm', 'te', 't', 'se', 's', 'lui']);
export const BEFORE_CLITIC_OR_CA: ReadonlySet<string> = new Set([...BEFORE_CLITIC, 'ca']);

/** A verb's forms by tense, six persons each (je, tu, il, nous, vous, ils): a form said by two persons is written twice. */
interface Conjugation {
  present: readonly string[];
  imperfect: readonly string[];
  future: readonly string[];
  conditional: readonly string[];
}
const AVOIR_FORMS: Conjugation = {
  present: ['ai', 'as', 'a', 'avons', 'avez', 'ont'],
  imperfect: ['avais', 'avais', 'avait', 'avions', 'aviez', 'avaient'],
  future: ['aurai', 'auras', 'aura', 'aurons', 'aurez', 'auront'],
  conditional: ['aurais', 'aurais', 'aurait', 'aurions', 'auriez', 'auraient'],
};
const ETRE_FORMS: Conjugation = {
  present: ['suis', 'es', 'est', 'sommes', 'êtes', 'sont'],
  imperfect: ['étais', 'étais', 'était', 'étions', 'étiez', 'étaient'],
  future: ['serai', 'seras', 'sera', 'serons', 'serez', 'seront'],
  conditional: ['serais', 'serais', 'serait', 'serions', 'seriez', 'seraient'],
};
const [JE, IL, ILS] = [0, 2, 5];
const all = (c: Conjugation) => new Set([...c.present, ...c.imperfect, ...c.future, ...c.conditional]);
/** The present and the persons a question about someone mostly uses: je/il/ils in the imperfect, il/ils in the future, il in the conditional. */
const usual = (c: Conjugation) => new Set([...c.present, ...[JE, IL, ILS].map((p) => c.imperfect[p]!), c.future[IL]!, c.future[ILS]!, c.conditional[IL]!]);

/** « avoir » in the present: the passé composé's auxiliary (« il a mangé »). */
export const AVOIR_PRESENT: ReadonlySet<string> = new Set(AVOIR_FORMS.present);
/** « avoir » as question-roles reads an auxiliary: the present and the usual persons of the other tenses (usual above). */
export const AVOIR_USUAL: ReadonlySet<string> = usual(AVOIR_FORMS);
/** Every finite form of « avoir » in the four tenses, with its infinitive and present participle. */
export const AVOIR: ReadonlySet<string> = new Set([...all(AVOIR_FORMS), 'avoir', 'ayant']);

export const ETRE_PRESENT: ReadonlySet<string> = new Set(ETRE_FORMS.present);
/** « être » as question-roles reads an auxiliary or a copula: the usual persons and the participle « été ». */
export const ETRE_USUAL: ReadonlySet<string> = new Set([...usual(ETRE_FORMS), 'été']);

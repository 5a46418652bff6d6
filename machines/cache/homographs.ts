/**
 * Homographs: one spelling, two words. « Ça t'a plu ? » (plaire) and « Il a plu ? » (pleuvoir) share
 * « plu »; « je suis » is « être » or « suivre »; « l'été » is a season, « j'ai été » is « être »;
 * « le livre » is a book, « une livre » a pound, « on me livre » a delivery. A stemmer, and an
 * embedding, see one word in each pair. Each entry here names its readings and how French grammar
 * tells them apart where it does: the gender of the determiner, a determiner at all (a noun, not a
 * verb), an impersonal « il » (« il a plu »), an indirect object (« t'a plu », « a plu à ma fille »),
 * an auxiliary « avoir » (« a été »). Where grammar cannot tell, the form is AMBIGUOUS: the guard
 * then lets it join only the same wording (machines/cache/content-words.ts), never another question
 * that merely shares the form. Pure and cheap: a map look-up, then a few neighbouring words.
 */

import { AVOIR, BEFORE_CLITIC_OR_CA, CLITICS as CLITIC_WORDS, DEMONSTRATIVE_SUBJECTS, DETERMINERS, POSSESSIVES as POSSESSIVE_WORDS, QUANTIFYING_DETERMINERS, SINGULAR_PRE_ADJECTIVES, SUBJECT_PRONOUNS as SUBJECT_WORDS } from '../french/word-classes.ts';

/** The word's ordinary treatment (its stop-word status or lexicon group) is the right reading. */
export const ORDINARY = Symbol('ordinary');
/** Grammar cannot tell the readings apart here. */
export const AMBIGUOUS = Symbol('ambiguous');
/** A content key of its own (« =plaire »), the ordinary treatment, or no reading to be sure of. */
export type Reading = string | typeof ORDINARY | typeof AMBIGUOUS;

/** The words around a homograph, folded (accents off) and as said (« a » has, « à » is to). */
export interface HomographContext {
  tokens: readonly string[];
  said: readonly string[];
  i: number;
  /** After a determiner or a preposition that takes a noun (the caller's noun position). */
  noun: boolean;
}

const MASCULINE = new Set(['le', 'un', 'du', 'au', 'ce', 'cet']);
const FEMININE = new Set(['la', 'une', 'cette', 'ma', 'ta', 'sa']);
/** « mon amie », « son école »: before a vowel these say nothing of the gender. */
const POSSESSIVE_MASCULINE = new Set(['mon', 'ton', 'son']);

/**
 * The gender the determiner before the noun at `i` gives it (« le port », « la porte », « une
 * grande porte »), or undefined where none does (« l' », « les », « mon » before a vowel, no
 * determiner, an object pronoun: « je la porte »).
 */
export function determinerGender(tokens: readonly string[], i: number): 'm' | 'f' | undefined {
  let d = i - 1;
  if (SINGULAR_PRE_ADJECTIVES.has(tokens[d] ?? '')) d -= 1;
  const det = tokens[d] ?? '';
  if ((det === 'le' || det === 'la') && BEFORE_CLITIC_OR_CA.has(tokens[d - 1] ?? '')) return undefined;
  if (MASCULINE.has(det)) return 'm';
  if (FEMININE.has(det)) return 'f';
  if (POSSESSIVE_MASCULINE.has(det) && !/^[aeiouyh]/.test(tokens[d + 1] ?? '')) return 'm';
  return undefined;
}

/** What may stand between an auxiliary and its participle (« n'a pas encore plu », « a beaucoup plu »). */
const BETWEEN = new Set(['ne', 'n', 'pas', 'plus', 'jamais', 'encore', 'deja', 'bien', 'beaucoup', 'vraiment', 'toujours', 'peu', 'trop', 'guere', 'tant']);
/** The indirect objects « plaire » takes: « ça t'a plu », « il lui a plu », « ça vous aurait plu ». */
const TO_SOMEONE = new Set(['me', 'm', 'te', 't', 'lui', 'nous', 'vous', 'leur']);
/** Between a subject and its auxiliary: negation and object pronouns (« il ne m'a pas plu »). */
const CLITICS: ReadonlySet<string> = new Set(CLITIC_WORDS);
/** « ça », « cela », « c' » too: « ça m'a plu ». */
const SUBJECT_PRONOUNS: ReadonlySet<string> = new Set([...SUBJECT_WORDS, ...DEMONSTRATIVE_SUBJECTS]);
const POSSESSIVES: ReadonlySet<string> = new Set(POSSESSIVE_WORDS);

/** The auxiliary « avoir » before the participle at `i`, past adverbs and negation; -1 when none. */
function auxiliaryBefore(tokens: readonly string[], i: number): number {
  let k = i - 1;
  while (k >= 0 && BETWEEN.has(tokens[k]!)) k -= 1;
  // « a-t-il plu », « t'a-t-elle plu »: the subject inverted after the auxiliary.
  if (/^(il|elle|on|ca)$/.test(tokens[k] ?? '') && tokens[k - 1] === 't' && AVOIR.has(tokens[k - 2] ?? '')) return k - 2;
  return k >= 0 && AVOIR.has(tokens[k]!) ? k : -1;
}

/** The subject of the auxiliary at `aux`: a pronoun (« il », « ça »), a noun (« le film ») or ''. */
function subjectOf(tokens: readonly string[], aux: number): string {
  if (tokens[aux + 1] === 't' && /^(il|elle|on|ca)$/.test(tokens[aux + 2] ?? '')) return tokens[aux + 2]!;
  let k = aux - 1;
  while (k >= 0 && CLITICS.has(tokens[k]!)) k -= 1;
  const w = tokens[k] ?? '';
  if (SUBJECT_PRONOUNS.has(w)) return w;
  // « vous avez plu »: the « vous » skipped as an object was the subject.
  if (/^(nous|vous)$/.test(tokens[k + 1] ?? '') && k + 1 < aux) return tokens[k + 1]!;
  // « le film a plu », « ta sortie t'a plu », « Claire a plu »: a noun or a name, never the weather.
  return k >= 0 && !/^(qu|que|est|ce)$/.test(w) ? 'noun' : '';
}

/** An indirect object of the participle's verb: a clitic before the auxiliary, or « à » + a person after. */
function toSomeone(tokens: readonly string[], said: readonly string[], i: number, aux: number): 'clitic' | 'person' | 'other' | false {
  let k = aux - 1;
  while (k >= 0 && (tokens[k] === 'ne' || tokens[k] === 'n')) k -= 1;
  const w = tokens[k] ?? '';
  // « a-t-il »: that « t » is sound, not « te »; « vous avez plu »: that « vous » is the subject.
  const sound = w === 't' && /^(il|elle|on)$/.test(tokens[k + 1] ?? '');
  const subject = (w === 'nous' && /^(avons|avions|aurons|aurions)$/.test(tokens[aux]!)) || (w === 'vous' && /^(avez|aviez|aurez|auriez)$/.test(tokens[aux]!));
  if (TO_SOMEONE.has(w) && !sound && !(subject && !SUBJECT_PRONOUNS.has(tokens[k - 1] ?? ''))) return 'clitic';
  if (said[i + 1] === 'à' || tokens[i + 1] === 'au' || tokens[i + 1] === 'aux') {
    const next = tokens[i + 2] ?? '';
    return POSSESSIVES.has(next) || /^(moi|toi|lui|elle|eux|elles|tout|tous|personne)$/.test(next) ? 'person' : 'other';
  }
  return false;
}

/**
 * « plu »: « plaire » takes an indirect object (« ça t'a plu », « le film a plu à ma mère ») or a
 * subject that is the thing liked (« le spectacle a plu », « ça a plu »); « pleuvoir » is impersonal
 * (« il a plu », « a-t-il plu cette nuit »). « il a plu à Brest » and « il a plu à Marie » stay
 * ambiguous: a town and a person look alike.
 */
function plu({ tokens, said, i }: HomographContext): Reading {
  const aux = auxiliaryBefore(tokens, i);
  if (aux === -1) return AMBIGUOUS;
  const object = toSomeone(tokens, said, i, aux);
  if (object === 'clitic' || object === 'person') return '=plaire';
  const subject = subjectOf(tokens, aux);
  // « il a plu à verse »: the one idiom of rain after « à ».
  if (subject === 'il') return object === 'other' && tokens[i + 2] !== 'verse' ? AMBIGUOUS : '=pleuvoir';
  return subject === '' ? AMBIGUOUS : '=plaire';
}

/**
 * « suis »: « être » before what she is (« je suis fatiguée », « je suis à la maison », « je me suis
 * levée », « où je suis »); « suivre » after « tu », before « moi » or after an object (« je te
 * suis »). Before a determiner (« je suis le chemin » / « je suis la plus âgée ») grammar cannot tell.
 */
function suis({ tokens, i }: HomographContext): Reading {
  const before = tokens[i - 1] ?? '';
  const next = tokens[i + 1] ?? '';
  // « tu suis le match », « suis-moi »: « être » would be « tu es », « sois ».
  if (before === 'tu' || next === 'moi') return '=suivre';
  if (/^(te|t|vous|le|la|l|les)$/.test(before) && /^(je|j|ne|n)$/.test(tokens[i - 2] ?? '')) return next === '' ? '=suivre' : AMBIGUOUS;
  // « je suis au jardin », « je suis du Nord »: a preposition, so « être ».
  if (DETERMINERS.has(next) && !/^(au|aux|du)$/.test(next) && !(next === 'un' && tokens[i + 2] === 'peu')) return AMBIGUOUS;
  return ORDINARY;
}

/** « été »: after « avoir », « être » (« j'ai été malade », « a-t-il été »); after a determiner or « en », the season. */
function ete(c: HomographContext): Reading {
  if (auxiliaryBefore(c.tokens, c.i) !== -1) return ORDINARY;
  if (c.noun || c.tokens[c.i - 1] === 'en' || c.tokens[c.i - 1] === 'cet') return '=saison-ete';
  return AMBIGUOUS;
}

/**
 * « est »: the compass point after « l' » (« à l'est », « de l'Est ») or « nord », « sud »; « être »
 * everywhere else (« quelle est », « il l'est »).
 */
const est = ({ tokens, i }: HomographContext): Reading =>
  (tokens[i - 1] === 'l' && !BEFORE_CLITIC_OR_CA.has(tokens[i - 2] ?? '')) || /^(nord|sud)$/.test(tokens[i - 1] ?? '') ? '=point-est' : ORDINARY;

/**
 * A noun form that is also a verb form: after a determiner the noun (« la ferme » a farm, « la
 * joue » a cheek, « le bois » wood, « une prise » a socket, « le sens » a direction), else the verb
 * the lexicon lists (« ferme la porte », « je bois », « tu sens »).
 */
const nounOrVerb = (form: string) => (c: HomographContext): Reading => (c.noun ? `=${form}-nom` : ORDINARY);

/**
 * « livre »: a book (« le livre », « un bon livre »), a pound (« une livre de cerises »), a delivery
 * (« on me livre », « il livre »). « les livres », « des livres », « mes livres » could be books or
 * pounds: grammar cannot tell.
 */
function livre(c: HomographContext): Reading {
  const before = c.tokens[c.i - 1] ?? '';
  if (!c.noun) return SUBJECT_PRONOUNS.has(before) || TO_SOMEONE.has(before) || CLITICS.has(before) ? '=livrer' : AMBIGUOUS;
  const gender = determinerGender(c.tokens, c.i);
  return gender === 'm' ? ORDINARY : gender === 'f' ? '=livre-poids' : AMBIGUOUS;
}

/**
 * « pêche »: a fruit (« une pêche », « des pêches », « deux pêches ») or fishing (« à la pêche »,
 * « je pêche »); « la pêche » alone could be either.
 */
function peche({ tokens, said, i, noun }: HomographContext): Reading {
  const before = tokens[i - 1] ?? '';
  if (tokens[i]!.endsWith('s') || before === 'une' || before === 'cette') return '=peche-fruit';
  if ((before === 'la' && said[i - 2] === 'à') || !noun) return '=peche-ligne';
  return AMBIGUOUS;
}

/**
 * Folding accents (what the lexicon is matched against) makes one spelling of two words told apart
 * by an accent: « sûr » / « sur », « mûr » / « mur », « tâche » / « tache », « jeûne » / « jeune »,
 * « forêt » / « foret », « maïs » / « mais », « prés » / « près », « dû » / « du ». The accented
 * word, as said, keeps its own key (« sûre » is « sûr »).
 */
const byAccent = (forms: string, key: string, otherwise: (c: HomographContext) => Reading = () => ORDINARY) => {
  const accented = new Set(forms.split(' '));
  return (c: HomographContext): Reading => (accented.has(c.said[c.i]!) ? key : otherwise(c));
};

/** After an article, these stop words are nouns: « une personne », « le car », « de l'or », « un as », « une vis ». */
const ARTICLES = new Set([...DETERMINERS, ...QUANTIFYING_DETERMINERS, 'en']);
const afterArticle = (key: string) => (c: HomographContext): Reading => (c.noun && ARTICLES.has(c.tokens[c.i - 1] ?? '') ? key : ORDINARY);

/** « son »: after an article a sound (« monte le son », « au son de »), else the possessive (« à son fils »). */
const son = (c: HomographContext): Reading => (c.noun && /^(le|un|du|au|ce)$/.test(c.tokens[c.i - 1] ?? '') ? '=son-bruit' : ORDINARY);

/** « vers »: after a determiner a verse or a worm, and nothing tells which; else the preposition. */
const vers = (c: HomographContext): Reading => (c.noun && DETERMINERS.has(c.tokens[c.i - 1] ?? '') ? AMBIGUOUS : ORDINARY);

/** « côté »: « le côté », « quel côté » is a side; « à côté », « du côté de » is near. « la côte » is a coast or a rib, no « côté ». */
function cote({ tokens, said, i, noun }: HomographContext): Reading {
  if (said[i] !== 'côté') return `=${said[i]}`;
  return noun && said[i - 1] !== 'à' && !/^(du|de|d)$/.test(tokens[i - 1] ?? '') ? '=cote-flanc' : ORDINARY;
}

/**
 * « temps »: weather (« quel temps fait-il », « le temps de demain ») as the lexicon lists it, or a
 * while (« combien de temps », « le temps de lire », « à temps », « j'ai le temps », « de temps en temps »).
 */
function temps({ tokens, said, i }: HomographContext): Reading {
  const before = tokens[i - 1] ?? '';
  const next = tokens[i + 1] ?? '';
  // « le temps de lire » is a while, « le temps de demain » the weather.
  const forDoing = (next === 'de' || next === 'd') && /(er|ir|re|oir)$/.test(tokens[i + 2] ?? '');
  if (before === 'de' || before === 'd' || said[i - 1] === 'à' || forDoing || POSSESSIVES.has(before) || before === 'du' || before === 'meme') return '=temps-duree';
  if (before === 'le' && AVOIR.has(tokens[i - 2] ?? '')) return '=temps-duree';
  return ORDINARY;
}

/** Noun forms spelled as a form of a verb the lexicon lists, each group by its singular: « la ferme » / « ferme la porte ». */
const NOUNS_OR_VERBS = ['ferme fermes', 'joue joues', 'bois', 'sens', 'prise prises', 'sort', 'vue', 'passe', 'coupe', 'presse', 'caille', 'remise'];
/** Folded forms and, after « = », the accented spellings of another word (« sur » / « sûr »). */
const BY_ACCENT = ['sur sure surs sures=sûr sûre sûrs sûres', 'mur mure murs mures=mûr mûre mûrs mûres', 'tache taches=tâche tâches', 'jeune jeunes=jeûne jeûnes', 'foret forets=forêt forêts', 'mais=maïs', 'pres=prés'];
/** Each folded form of a group with the reading its group's first form (and what follows « = ») gives. */
const forms = (groups: readonly string[], read: (one: string, accented: string) => (c: HomographContext) => Reading) =>
  groups.flatMap((group) => {
    const [folded, accented = ''] = group.split('=');
    const list = folded!.split(' ');
    const reading = read(list[0]!, accented);
    return list.map((f) => [f, reading] as const);
  });

const partNoun = nounOrVerb('part');

/** The homographs by form (folded: « été » is « ete »), each with how its readings are told apart. */
export const HOMOGRAPHS: ReadonlyMap<string, (c: HomographContext) => Reading> = new Map([
  ['plu', plu],
  ['suis', suis],
  ['ete', ete],
  ['est', est],
  ['livre', livre],
  ['livres', livre],
  ['son', son],
  ['vers', vers],
  ['cote', cote],
  ['temps', temps],
  // « quelque part », « nulle part »: a place, no « partir »
  ['part', (c) => (/^(quelque|nulle|autre)$/.test(c.tokens[c.i - 1] ?? '') ? '=part-lieu' : partNoun(c))],
  ['peche', byAccent('péché péchés', '=péché', peche)],
  ['peches', byAccent('péché péchés', '=péché', peche)],
  ...forms(NOUNS_OR_VERBS, (one) => nounOrVerb(one)),
  ...forms(BY_ACCENT, (_one, accented) => byAccent(accented, `=${accented.split(' ')[0]}`)),
  // « il a dû partir » must, as « il doit » does; « du » is the article
  ['du', byAccent('dû', 'm:must')],
  // « il n'y a personne » is no one; « une personne », « des personnes » someone
  ['personne', afterArticle('=personne-gens')],
  ['personnes', () => '=personne-gens'],
  ['car', afterArticle('=car-autocar')],
  ['or', afterArticle('=or-metal')],
  ['as', afterArticle('=as-carte')],
  ['vis', afterArticle('=vis-objet')],
]);

/** How the homograph at `c.i` reads, or undefined when the word there is no homograph. */
export function homographReading(c: HomographContext): Reading | undefined {
  return HOMOGRAPHS.get(c.tokens[c.i]!)?.(c);
}

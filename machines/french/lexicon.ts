/**
 * French word lists — stop words, modal and request verbs, question words, spoken phrases — read by the
 * cache's guard (machines/cache/) and the recognizer's context bias, written from the companion-kiosk
 * domain (what a senior asks a companion at home), not from any labelled pair.
 * Words are written as a senior would say them; the guard folds accents and case when it loads them.
 */

/**
 * Words that carry no content of their own in a question: articles, pronouns, prepositions,
 * conjunctions, negation particles (the detail guard owns negation), the auxiliaries, the light
 * verb « faire », fillers, and the request verbs that only say « tell me »
 * (« dis-moi », « raconte-moi », « tu connais », « tu sais », « tu crois que », « tu me conseilles »,
 * « j'aimerais »). « jusqu'à » is not one: « jusqu'à
 * quelle heure » asks when it closes, not when it opens.
 */
export const STOP_WORDS = `
le la les l un une des du de d au aux ce cet cette ces mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs
quelque quelques chaque tout toute tous toutes
je j tu t il elle on nous vous ils elles me m te se s moi toi lui eux y en ça ca cela ceci c celui celle ceux celles
que qu dont
à a dans sur sous avec sans chez pour par vers entre pendant depuis durant
et ou mais donc or ni car si comme puis alors ensuite sinon aussi
ne n pas plus rien jamais personne aucun aucune guère
suis es est sommes êtes sont étais était étions étiez étaient serai seras sera serons serez seront serais serait serions seriez seraient
sois soit soyons soyez soient été être
ai as avons avez ont avais avait avions aviez avaient aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient
aie aies ait ayons ayez aient eu eue avoir
fais fait faisons faites font ferai feras fera ferons ferez feront ferais ferait ferions feriez feraient faisais faisait fasse faire
dis dit disons dites disent dire disais disait redis redites redire
raconte racontes racontez raconter racontais racontait raconté conte contes contez conter
connais connait connaît connaissez connaissons connaissent connaître connaitre connu
sais sait savons savez savent savoir savais savait
pense penses pensez penser pensé crois croit croyez croire
conseille conseilles conseillez conseiller recommande recommandes recommandez recommander propose proposes proposez proposer suggère suggères suggérez suggérer
peutêtre
svp stp plaît plait merci oui non ben bah ah oh eh euh hein voilà voici tiens
très vraiment bien déjà même maintenant actuellement là ici
encore toujours enfin bientôt souvent parfois quelquefois
madame monsieur mademoiselle maître kohami
lieu
préparer prépare prépares préparez cuisiner cuisine cuisines cuisinez
réciter récite récites récitez
souviens souvient souvenez rappelles confirmes confirmez confirme
idée idées
commence commencent commencer commencé commencée débute débuter
annonce annoncent annoncé prévoit prévoient prévu ensemble avis selon
`;

/**
 * Modal verbs by what they ask: « je peux prendre » (may I), « je dois prendre » (must I), « je
 * devrais » (should I), « je veux » (I want) are four questions. « il faut » and « avoir besoin de »
 * oblige as « devoir » does; « j'aimerais » wants as « je voudrais » does. Only a polite frame
 * (« tu peux allumer… », « tu veux bien fermer… », « je voudrais savoir… ») carries none.
 */
export const MODAL_VERBS: Record<string, string> = {
  'm:can': 'peux peut pouvons pouvez peuvent pourrais pourrait pourrions pourriez pourraient pourrai pourras pourra pourrons pourrez pourront pouvais pouvait pu puisse puisses puissiez pouvoir',
  'm:must': 'dois doit devons devez doivent devrai devra devras devrons devrez devront devais devait devoir faut faudra fallait fallu falloir',
  'm:should': 'devrais devrait devrions devriez devraient faudrait',
  'm:want': 'veux veut voulons voulez veulent voudrais voudrait voudrions voudriez voudraient voudrai voudra voulais voulait voulu veuille veuillez vouloir aimerais aimerait aimerions aimeriez',
};

/**
 * The request verbs by lemma: when nothing else is asked (« Que dis-tu ? », « Que sais-tu ? »), the
 * request verb is the question's own verb, and content.
 */
export const REQUEST_LEMMAS: readonly string[] = [
  'dire dis dit dites disons disent disais disait redis redites redire',
  'raconter raconte racontes racontez racontais racontait raconté',
  'connaître connais connait connaît connaissez connaissons connaissent connaitre connu',
  'savoir sais sait savons savez savent savais savait',
  'souvenir souviens souvient souvenez',
  'rappeler rappelles rappelez',
  'penser pense penses pensez pensé',
  'croire crois croit croyez',
  'conseiller conseille conseilles conseillez recommande recommandes recommandez recommander',
  'proposer propose proposes proposez suggère suggères suggérez suggérer',
  'réciter récite récites récitez',
  'confirmer confirmes confirmez confirme',
];

/**
 * The request verbs: « dis-moi X », « tu connais X », « tu te souviens de X », « raconte-moi X »
 * ask « what is X » as « c'est quoi X » and « qu'est-ce que X » do, so they count as that question
 * word — unless a yes/no « si » or another question word follows (« dis-moi s'il pleut », « tu sais
 * où … »), or « je » says them (« je connais une blague » tells, it does not ask).
 */
export const REQUEST_VERBS = `
dis dites dire raconte racontes racontez raconter redis redites redire
connais connaissez connaître connaitre sais savez savoir
souviens souvenez rappelles rappelez récite récites récitez réciter confirmes confirmez
conseille conseilles conseillez recommande recommandes recommandez propose proposes proposez suggère suggères suggérez
`;

/**
 * Nouns that ask « when » after « quel » (« à quel moment », « à quelle période »); « la date de »
 * asks it wherever a question asks « what » (« c'est quoi la date de Pâques » is « c'est quand Pâques »).
 */
export const WHEN_NOUNS = 'moment moments période périodes';
export const DATE_NOUNS = 'date dates';

/**
 * Nouns that ask « how »: « c'est quoi la recette des crêpes », « la bonne façon de tailler un
 * rosier » ask what « comment on fait des crêpes », « comment on taille un rosier » ask.
 */
/**
 * Nouns whose plural is another word: « les pâtes » are pasta, « la pâte » dough; « les lunettes »
 * glasses, « la lunette » a telescope; « les courses » the shopping, « la course » a race. A closed
 * list, each in its plural form: said in the plural such a noun keeps its number, where any other
 * noun's plural is the same noun (« les chats » / « le chat »).
 */
/** The week's days and the months: named dates, never names of people, never participles, never content to stem. */
export const CALENDAR_WORDS = 'lundi mardi mercredi jeudi vendredi samedi dimanche janvier février mars avril mai juin juillet août septembre octobre novembre décembre';
export const PLURAL_SENSE_NOUNS = 'pâtes lunettes courses affaires vacances toilettes économies échecs papiers soldes jumelles ciseaux provisions règles dames moyens comptes';

export const HOW_NOUNS = 'recette recettes façon façons manière manières méthode méthodes astuce astuces technique techniques';

/**
 * Spoken forms rewritten before either guard reads the question, each true wherever it is said:
 * a phrase that means one word (« une histoire drôle » is « une blague », « qui fait pleurer » is
 * « triste », « donner à manger » is « nourrir »), and the short forms of « rendez-vous » (whose
 * « vous » is no person) and « après-midi ».
 */
export const SPOKEN_PHRASES: ReadonlyArray<readonly [RegExp, string]> = [
  // Written titles (« M. Lambert », « Mme Faure »); « peut-être » is an adverb, no « pouvoir ».
  [/(?<![\p{L}])M\.\s*(?=\p{Lu})/gu, 'monsieur '],
  [/(?<![\p{L}])Mmes?\.?(?![\p{L}])/gu, 'madame'],
  [/(?<![\p{L}])Mlles?\.?(?![\p{L}])/gu, 'mademoiselle'],
  [/(?<![\p{L}])peut[\s-]être(?![\p{L}])/giu, 'peutêtre'],
  [/(?<![\p{L}])tout le temps(?![\p{L}])/giu, 'toujours'],
  // « au juste », « exactement » only insist: « il a quel âge, au juste ? » asks his age
  [/(?<![\p{L}])(?:au juste|exactement)(?![\p{L}])/giu, ''],
  // « fais-moi penser à sortir », « tu me fais penser à… » remind, as « rappelle-moi de » does
  [/(?<![\p{L}])(?:faire|fais|fait|faites)((?:[\s-]moi)?) penser (?:à|a)(?![\p{L}])/giu, 'rappeler$1 de'],
  // « il pleut de nouveau », « à nouveau » : again, as « encore » (« de nouvelles lunettes », « de nouveaux amis » are new)
  [/(?<![\p{L}])(?:de|à) nouveau(?![\p{L}])/giu, 'encore'],
  // « de temps en temps » is « parfois », no « temps » (weather)
  [/(?<![\p{L}])de temps (?:en|à) temps(?![\p{L}])/giu, 'parfois'],
  [/(?<![\p{L}])(?:rendez[\s-]vous|rdv)(?![\p{L}])/giu, 'rdv'],
  [/(?<![\p{L}])apr[eè]m(?![\p{L}])/giu, 'après-midi'],
  [/(?<![\p{L}])(?:qui )?(?:fait|font|faire|fais) (?:me |m'|nous |vous )?rire(?![\p{L}])/giu, 'drôle'],
  [/(?<![\p{L}])(?:qui )?(?:fait|font|faire|fais) (?:me |m'|nous |vous )?pleurer(?![\p{L}])/giu, 'triste'],
  [/(?<![\p{L}])(?:histoires?|trucs?|choses?|blagues?) (?:drôles?|droles?|rigolotes?|rigolos?|marrantes?|marrants?|amusantes?|amusants?|comiques?)(?![\p{L}])/giu, 'blague'],
  [/(?<![\p{L}])films? (?:drôles?|droles?|rigolos?|marrants?|amusants?|comiques?)(?![\p{L}])/giu, 'comédie'],
  [/(?<![\p{L}])(?:tomber|tombe|tombera) (?:de la )?neige(?![\p{L}])/giu, 'neiger'],
  [/(?<![\p{L}])(?:tomber|tombe|tombera) (?:de la )?pluie(?![\p{L}])/giu, 'pleuvoir'],
  [/(?<![\p{L}])qui l['’ ](?:a |ont )?emport(?:é|e)(?![\p{L}])/giu, 'qui a gagné'],
  [/(?<![\p{L}])l['’ ]impression d['’ ]être(?![\p{L}])/giu, 'être'],
  // « les nouvelles du sport », « des nouvelles de ma fille » are news; « de nouvelles lunettes » are new.
  [/(?<![\p{L}])nouvelles(?= (?:du|de|des|d['’])(?![\p{L}])|\s*[?.!,]|\s*$)/giu, 'infos'],
  [/(?<![\p{L}])du jour(?![\p{L}])/giu, "d'aujourd'hui"],
  [/(?<![\p{L}])(?:mettre|mets|met|mettez) (la |le |l['’])(chauffage|son|volume|radio|télé|télévision) plus fort(?![\p{L}])/giu, 'monter $1$2'],
  [/(?<![\p{L}])(?:mettre|mets|met|mettez)(?:[\s-]moi)? (la |le |l['’])(lumière|lampe|télé|télévision|radio|chauffage)(?![\p{L}])/giu, 'allumer $1$2'],
  [/(?<![\p{L}])(?:donner|donne|donnes|donnez) (?:à|a) manger(?![\p{L}])/giu, 'nourrir'],
  // the participle stays one: « j'ai donné à manger » is a past
  [/(?<![\p{L}])donné (?:à|a) manger(?![\p{L}])/giu, 'nourri'],
  [/(?<![\p{L}])(?:prendre|prends|prend|prenez|pris)(?:[\s-]moi)? (?:un |le |mon )?rdv(?![\p{L}])/giu, 'rdv'],
  [/(?<![\p{L}])(?:prendre|prend|prends|pris) (?:sa|ma|ta|votre|leur) retraite(?![\p{L}])/giu, 'à la retraite'],
  [/(?<![\p{L}])(?:hospitalisée?s?)(?![\p{L}])/giu, "à l'hôpital"],
  [/(?<![\p{L}])(?:partir|pars|part|partent|parti|partie|partis|parties) en (vacances|congés?|voyage)(?![\p{L}])/giu, 'en $1'],
  [/(?<![\p{L}])faire de la lumière(?![\p{L}])/giu, 'allumer la lumière'],
  [/(?<![\p{L}])(?:le )?ventre vide(?![\p{L}])/giu, 'à jeun'],
  [/(?<![\p{L}])répondre au téléphone(?![\p{L}])/giu, 'décrocher'],
  [/(?<![\p{L}])changé de (?:maison|logement|appartement)(?![\p{L}])/giu, 'déménagé'],
  [/(?<![\p{L}])changer de (?:maison|logement|appartement)(?![\p{L}])/giu, 'déménager'],
  [/(?<![\p{L}])(ai|as|a|avons|avez|ont) le droit (?:de |d['’])/giu, 'peux '],
  [/(?<![\p{L}])en ce moment(?![\p{L}])/giu, 'maintenant'],
  [/(?<![\p{L}])(?:ai|as|a|avez|avons|ont) besoin (?:de |d['’])/giu, 'faut '],
  [/(?<![\p{L}])une demi[\s-]heure(?![\p{L}])/giu, 'trente minutes'],
  [/(?<![\p{L}])pas loin(?![\p{L}])/giu, 'près'],
  [/(?<![\p{L}])pas (?:trop |très |si )?(?:compliquée?s?|difficiles?)(?![\p{L}])/giu, 'facile'],
  // « passer à la pharmacie » goes there; « passer à la télé » is on air.
  [/(?<![\p{L}])(?:passer|passe|passes|passez|faire un saut|fais un saut|fasse un saut) (à|chez) (la|le|l['’]|les|mon|ma)(?! ?(?:télé|radio|cinéma))/giu, 'aller $1 $2'],
  [/(?<![\p{L}])(?:fait|fais|faire|faisons|faites|fasse) une (?:petite )?partie (?:de |d['’])/giu, 'joue à '],
];

/** Question words: they decide what kind of answer is wanted, so they must match like content words. */
export const QUESTION_WORDS: Record<string, string> = {
  où: 'q:where',
  quand: 'q:when',
  comment: 'q:how',
  pourquoi: 'q:why',
  combien: 'q:how-many',
  qui: 'q:who',
  quoi: 'q:what',
  quel: 'q:what',
  quelle: 'q:what',
  quels: 'q:what',
  quelles: 'q:what',
  lequel: 'q:what',
  laquelle: 'q:what',
};

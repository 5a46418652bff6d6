/**
 * The French word lists behind the content-word guard (machines/cache/content-words.ts), written from
 * the companion-kiosk domain — what a senior asks a companion at home — not from any labelled pair.
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

/**
 * Words (and the forms a light stemmer cannot join) that mean the same thing in a question; the
 * first word names the group. A word may sit in one group only.
 */
export const EQUIVALENTS: readonly string[] = [
  // persons, subject and possessive (« où ai-je posé » / « où j'ai posé »): stop words, kept for their contrasts
  'je j',
  'tu vous',
  'il ils',
  'elle elles',
  'mon ma mes',
  'ton ta tes votre vos',
  'son sa ses',
  'leur leurs',
  // people and care
  'médecin médecins docteur docteurs toubib généraliste',
  'mère maman mères mamans',
  'père papa pères papas',
  'enfant enfants gamin gamins gamine gamines gosse gosses môme mômes',
  'malade malades souffrant souffrante souffrants maladie',
  'guéri guérie guéris guérir guérit rétabli rétablie remis remise',
  'hôpital hôpitaux',
  'médicament médicaments cachet cachets pilule pilules comprimé comprimés traitement remède remèdes',
  'infirmière infirmières infirmier infirmiers',
  'kiné kinés kinésithérapeute',
  // things at home
  'télé télévision téléviseur tv',
  'voiture voitures auto autos automobile bagnole',
  'clé clés clef clefs trousseau',
  'lunettes',
  'lumière lumières lampe lampes éclairage',
  'appeler appelle appelles appellent appelez appelons appelé appelée appellerai appellera appel appels téléphoner téléphone téléphones téléphoné téléphonez joindre contacter',
  'rdv',
  'annuler annule annulé annulée annulez décommander décommande',
  'rappeler rappelle rappelles rappelez rappelé',
  'courses commissions emplettes',
  'acheter achète achètes achetez acheté achat achats',
  'vendre vends vend vendu vendez vente',
  // weather
  'météo temps prévisions prévision',
  'pleuvoir pleut pleuvra pleuvait pleuvrait pluie pluies pluvieux averse averses',
  'neiger neige neigera neigeait neigerait neiges neigeux',
  'chaud chaude chauds chaudes chaleur canicule',
  'froid froide froids froides glacial glaciale frisquet caille cailler',
  'soleil ensoleillé ensoleillée',
  // feelings and health
  'triste tristes tristesse malheureux malheureuse déprimé déprimée cafard morose',
  'joyeux joyeuse gai gaie heureux heureuse content contente joie bonheur',
  'drôle drôles amusant amusante amusantes marrant marrante rigolo rigolote comique',
  'fatigué fatiguée fatigue épuisé épuisée crevé crevée',
  'peur crainte effrayé effrayée',
  'inquiet inquiète inquiétude souci soucis préoccupé préoccupée grave graves',
  'seul seule seuls solitude isolé isolée',
  'mal douleur douleurs souffrir souffre souffres souffert douloureux douloureuse',
  'mieux meilleur meilleure',
  'dormir dors dort dormi dormais dormait sommeil endormir endors endort endormi endormie',
  'réveiller réveille réveillé réveillée réveil',
  'aimer aime aimes aiment aimez aimons aimé aimée aimais aimait adorer adore adores adorez adoré apprécier apprécie apprécies',
  'détester déteste détestes détestez détesté haïr hais hait horreur',
  'souvenir souviens souvient souvenez souvenu',
  'oublier oublie oublies oubliez oublié oubliée oubli',
  // stories, songs, games
  'histoire histoires conte',
  'blague blagues plaisanterie plaisanteries',
  // what « un film drôle » becomes (SPOKEN_PHRASES, below): listed, so the rewritten « un comédie » carries no gender
  'comédie comédies',
  'chanson chansons chansonnette chant chants chanter chante chantes chantez chanté',
  'jouer joue joues jouez joué jeu jeux',
  'ajouter ajoute ajoutes ajoutez ajouté rajouter rajoute rajoutes rajoutez rajouté',
  'appuyer appuie appuies appuyez appuyé presser presse pressez taper tape tapes tapez',
  'promener promène promènes promenez promené promenade promenades balade balades balader',
  'manger mange manges mangez mangeons mangent mangé mangeais mangeait mangera repas mangeable',
  'nourrir nourris nourrit nourri nourrie nourriture',
  'vacances congé congés',
  'info infos information informations actu actus actualité actualités',
  'sport sports sportif sportive sportifs sportives',
  'facile faciles facilement simple simples simplement',
  'difficile difficiles compliqué compliquée compliqués dur dure',
  'près proche proches côté',
  'poubelle poubelles bac bacs',
  'cueillir cueille cueilles cueillez cueilli ramasser ramasse ramasses ramassez ramassé',
  'marcher fonctionner fonctionne fonctionnent fonctionné',
  // body
  'œil yeux',
  'gonfler gonfle gonflent gonflé gonflée gonflées gonflés enfler enfle enflent enflé enflée enflées enflés',
  'picotement picotements picote picotent fourmis fourmille fourmillent fourmillement fourmillements',
  // coming and going
  'rentrer rentre rentres rentrez rentré rentrée revenir reviens revient revenez revenu revenue retour retourner',
  'sortir sors sort sortez sorti sortie',
  'partir pars part partez parti départ',
  'arriver arrive arrives arrivez arrivé arrivée',
  'aller vais vas va allons allez vont irai iras ira irons irez iront irais irait allais allait allé allée aille ailles aillent',
  'venir viens vient venons venez viennent vienne viennes venu venue viendra viendrait venait passer passe passes passez passent passé passée passera passait',
  'prendre prends prend prenons prenez prennent prenne prennes pris prise prenais prenait prendra avaler avale avales avalez avalé',
  'mettre mets met mettez mis mise',
  'suivre suit suivez suivons suivent suivi suivie',
  'livrer livré livrée livrés livrées livrent livrez livraison livraisons',
  'voir vois voit voyons voyez voient voie vu vue verra verrai voyait',
  'boire bois boit buvons buvez boivent boive boives bu boira',
  'cuire cuis cuit cuite cuits cuites cuisent cuisez cuisson',
  'lire lis lisons lisez lise lu lira lecture',
  'écrire écris écrit écrivez écrive écrira',
  'attendre attends attend attendu attendez',
  'entendre entends entend entendu entendez',
  'sentir sens sent senti sentez',
  'ouvrir ouvre ouvres ouvrez ouvert ouverte ouverts ouvertes ouverture',
  'fermer ferme fermes fermez fermé fermée fermés fermées fermeture',
  'allumer allume allumes allumez allumé allumée',
  'éteindre éteins éteint éteinte éteignez éteigne couper coupe coupes coupez coupé coupée',
  'monter monte montes montez monté montée augmenter augmente augmentez',
  'descendre descends descend descendez descendu descendue descente baisser baisse baissez diminuer diminue diminuez',
  'gagner gagne gagnes gagnez gagné',
  'perdre perds perd perdez perdu perdue perte',
  'commencer commence commencé début débuter',
  'finir finis finit fini finie fin terminer termine terminé',
  // adjectives a stemmer cannot join
  'beau belle bel beaux belles',
  'vieux vieille vieil vieilles',
  'nouveau nouvelle nouvel nouveaux nouvelles',
  'blanc blanche blancs blanches',
  'frais fraîche fraîches',
  'doux douce douces',
  'long longue longs longues',
  'gros grosse grosses',
  'bon bonne bons bonnes',
  'gentil gentille gentils gentilles',
  'mauvais mauvaise mauvaises',
  'violet violette violets violettes',
];

/**
 * Pairs of groups (by any of their words) that answer opposite questions: one on each side
 * refuses the hit outright, whatever else the questions share.
 */
export const CONTRASTS: ReadonlyArray<readonly [string, string]> = [
  ['chaud', 'froid'],
  ['allumer', 'éteindre'],
  ['ouvrir', 'fermer'],
  ['monter', 'descendre'],
  ['gagner', 'perdre'],
  ['bien', 'mal'],
  ['mieux', 'mal'],
  ['mieux', 'pire'],
  ['aimer', 'détester'],
  ['triste', 'joyeux'],
  ['triste', 'drôle'],
  ['entrer', 'sortir'],
  ['rentrer', 'sortir'],
  ['rentrer', 'partir'],
  ['arriver', 'partir'],
  ['commencer', 'finir'],
  ['acheter', 'vendre'],
  ['grand', 'petit'],
  ['jeune', 'vieux'],
  ['long', 'court'],
  ['lourd', 'léger'],
  ['facile', 'difficile'],
  ['plein', 'vide'],
  ['propre', 'sale'],
  ['rapide', 'lent'],
  ['tôt', 'tard'],
  ['haut', 'bas'],
  ['avant', 'après'],
  ['lever', 'coucher'],
  ['dormir', 'réveiller'],
  ['souvenir', 'oublier'],
  ['accepter', 'refuser'],
  ['envoyer', 'recevoir'],
  ['brancher', 'débrancher'],
  ['rire', 'pleurer'],
  ['bon', 'mauvais'],
  ['beau', 'laid'],
  ['beau', 'moche'],
  ['calme', 'nerveux'],
  ['jour', 'nuit'],
  ['mettre', 'enlever'],
  ['ajouter', 'enlever'],
  ['gauche', 'droite'],
  ['beaucoup', 'peu'],
  ['remplir', 'vider'],
  ['vivant', 'mort'],
  ['malade', 'guéri'],
  ['gros', 'maigre'],
  ['réussir', 'rater'],
  ['doux', 'dur'],
  ['sucré', 'salé'],
  ['nouveau', 'vieux'],
  // Stop words whose opposite changes the question (« sur la table » / « sous la table »).
  ['sur', 'sous'],
  ['avec', 'sans'],
  ['dedans', 'dehors'],
  ['dessus', 'dessous'],
  ['devant', 'derrière'],
  // Whom the question is about: « tu es fatigué ? » is not « je suis fatigué », « mes lunettes » not « ses lunettes ».
  ['je', 'tu'],
  ['je', 'il'],
  ['tu', 'il'],
  ['je', 'elle'],
  ['tu', 'elle'],
  // a pronoun's gender, as a determiner's: « il est mort ? » is not « elle est morte ? »
  ['il', 'elle'],
  ['mon', 'ton'],
  ['mon', 'son'],
  ['ton', 'son'],
  // every possessor's person, the plurals too: « leur chien » is not « mon chien », « notre fille » not « sa fille »
  ['leur', 'mon'],
  ['leur', 'ton'],
  ['leur', 'son'],
  ['notre', 'ton'],
  ['notre', 'son'],
  ['notre', 'leur'],
  ['nos', 'ton'],
  ['nos', 'son'],
  ['nos', 'leur'],
  // with and without: « un gâteau au chocolat » is no « gâteau sans chocolat »
  ['au', 'sans'],
  ['aux', 'sans'],
  // a choice is not a sum: « chez ma sœur ou chez mon frère » is not « … et chez mon frère »
  ['ou', 'et'],
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

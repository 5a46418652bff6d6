import { describe, expect, it } from 'vitest';
import { contentKey } from '../../machines/cache/content-words.ts';
import { cacheRefusal, isHealthQuestion } from '../../machines/cache/health-topics.ts';
import { guardsAgree, questionGuard } from '../../machines/cache/near-miss-guard.ts';
import { questionRoles } from '../../machines/cache/question-roles.ts';

/** The guard both ways: a cached answer may serve either question for the other. */
const agree = (a: string, b: string) => guardsAgree(questionGuard(a), questionGuard(b)) && guardsAgree(questionGuard(b), questionGuard(a));

// Each rule with a near-miss it refuses and a paraphrase it still lets through, side by side.
describe.each([
  {
    rule: 'modal and obligation verbs are content: may ≠ must ≠ should ≠ want',
    nearMisses: [
      ['Je peux prendre un bain ce soir ?', 'Je dois prendre un bain ce soir ?'],
      ['Il faut que je sorte la poubelle ?', 'Je peux sortir la poubelle ?'],
      ['Je veux aller au marché demain.', 'Je dois aller au marché demain.'],
      ['Je devrais vendre la voiture ?', 'Je dois vendre la voiture ?'],
      ['Faut-il réserver pour le repas du club ?', 'Peut-on réserver pour le repas du club ?'],
    ],
    paraphrases: [
      ['Je dois rappeler la mairie ?', 'Il faut que je rappelle la mairie ?'],
      ['Est-ce que je peux inviter Suzanne ?', "J'ai le droit d'inviter Suzanne ?"],
      // a polite frame asks nothing of its own
      ['Tu peux allumer la radio ?', 'Allume la radio.'],
      ['Pourriez-vous me lire le journal ?', 'Lis-moi le journal.'],
      ['Je voudrais savoir quand ouvre la poste.', 'Quand ouvre la poste ?'],
      // « il faut » after a question word says how one does it
      ['Comment il faut tailler les rosiers ?', 'Comment on taille les rosiers ?'],
    ],
  },
  {
    rule: 'titles are details',
    nearMisses: [
      ['Monsieur Dupont vient dimanche ?', 'Madame Dupont vient dimanche ?'],
      ['Mademoiselle Petit vient jouer aux cartes ?', 'Madame Petit vient jouer aux cartes ?'],
    ],
    paraphrases: [
      ['M. Lambert est rentré de voyage ?', 'Monsieur Lambert est rentré de voyage ?'],
      ['Mme Faure vient jeudi ?', 'Est-ce que madame Faure vient jeudi ?'],
    ],
  },
  {
    rule: 'quantifiers are details: all ≠ some ≠ none said',
    nearMisses: [
      ['Je dois tout manger ce midi ?', 'Je dois manger ce midi ?'],
      ['Quelques amis viennent dimanche ?', 'Tous mes amis viennent dimanche ?'],
      ['Tout le monde est invité à la fête ?', "Quelqu'un est invité à la fête ?"],
    ],
    paraphrases: [
      ['Je dois marcher chaque jour ?', 'Je dois marcher tous les jours ?'],
      // « tout » before an adjective only intensifies; « tout de suite » is no quantity
      ['Ce matin le ciel est bien gris.', 'Ce matin le ciel est tout gris.'],
      ['Il faut partir tout de suite ?', 'Tout de suite, il faut partir ?'],
    ],
  },
  {
    rule: 'a request verb that is the question is content',
    nearMisses: [
      ['Que dis-tu ?', 'Que sais-tu ?'],
      ['Qu’est-ce que tu racontes ?', 'Qu’est-ce que tu proposes ?'],
      ['Tu sais quoi ?', 'Tu dis quoi ?'],
    ],
    paraphrases: [
      ['Que dis-tu ?', 'Qu’est-ce que tu dis ?'],
      // a request verb before what it asks stays a frame
      ['Dis-moi une blague.', 'Raconte-moi une blague.'],
      ['Tu sais quel jour on est ?', 'Quel jour on est ?'],
    ],
  },
  {
    rule: 'the stemmer joins only what the lexicon lists or proves',
    nearMisses: [
      ['Il y a du vent demain ?', 'Il y a une vente demain ?'],
      ['Mon fils est parti ?', 'Mon fils est à Paris ?'],
      ['Tu as vu le prix ?', 'Tu as vu la prise ?'],
      ['J’ai rangé la boîte ?', 'J’ai rangé le bois ?'],
      ['Le boucher est ouvert ?', 'La bouche est ouverte ?'],
      ['On mange des pâtes ce soir ?', 'On mange du pâté ce soir ?'],
    ],
    paraphrases: [
      ['Les vents sont forts aujourd’hui ?', 'Le vent est fort aujourd’hui ?'],
      ['Tu es fatiguée ?', 'Vous êtes fatigués ?'],
      ['Il faut arroser les tomates ?', 'Il faut que j’arrose les tomates ?'],
      ['Vous dormez bien ?', 'Tu dors bien ?'],
    ],
  },
  {
    rule: 'the roles of the people must match',
    nearMisses: [
      ['Ma fille a appelé mon fils ?', 'Mon fils a appelé ma fille ?'],
      ['Ma fille m’a appelée ce matin ?', 'J’ai appelé ma fille ce matin ?'],
      ['On m’a appelée pendant ma sieste ?', 'J’ai appelé pendant ma sieste ?'],
      ['Claire a appelé Pierre hier ?', 'Pierre a appelé Claire hier ?'],
      ['Mon petit-fils m’a envoyé une carte ?', 'J’ai envoyé une carte à mon petit-fils ?'],
    ],
    paraphrases: [
      ['C’est ma sœur qui a invité le voisin ?', 'Ma sœur a invité le voisin ?'],
      ['Quand vient ma fille ?', 'Ma fille vient quand ?'],
      ['Il est passé, le facteur ?', 'Est-ce que le facteur est passé ?'],
      ['J’ai appelé ma fille ce matin ?', 'Est-ce que j’ai téléphoné à ma fille ce matin ?'],
      ['Ma fille passe me voir dimanche ?', 'Ma fille vient dimanche ?'],
    ],
  },
])('$rule', ({ nearMisses, paraphrases }) => {
  it.each(nearMisses)('refuses « %s » / « %s »', (a, b) => expect(agree(a, b)).toBe(false));
  it.each(paraphrases)('lets « %s » / « %s » through', (a, b) => expect(agree(a, b)).toBe(true));
});

describe('the stemmer', () => {
  it('joins a listed word only with its listed or proven inflections', () => {
    expect(contentKey('fatigues')).toBe(contentKey('fatigue')); // a plural of « fatigué »
    expect(contentKey('partie')).toBe(contentKey('parti')); // a participle's feminine
    expect(contentKey('dormez')).toBe(contentKey('dormir')); // through the listed infinitive
    expect(contentKey('boite')).not.toBe(contentKey('boit'));
    expect(contentKey('prise')).not.toBe(contentKey('prix'));
    expect(contentKey('paris')).not.toBe(contentKey('pars'));
    expect(contentKey('vent')).not.toBe(contentKey('vente'));
  });
});

describe('roles', () => {
  it('names who does what to whom, and nothing when no one can swap', () => {
    expect(questionRoles('Ma fille a appelé le docteur ?')).toEqual(['obj:medecin', 'subj:fille']);
    expect(questionRoles('Le docteur a appelé ma fille ?')).toEqual(['obj:fille', 'subj:medecin']);
    expect(questionRoles('Ma fille m’a appelée ?')).toEqual(['obj:self', 'subj:fille']);
    expect(questionRoles('Qui a appelé ma fille ?')).toEqual(['obj:fille']);
    expect(questionRoles('Ma fille a appelé ?')).toEqual([]);
    expect(questionRoles('Ça me fait mal.')).toEqual([]);
    expect(questionRoles('Tu peux me dire l’heure ?')).toEqual([]);
  });
});

describe('health questions', () => {
  it.each([
    'Je peux prendre mon cachet maintenant ?',
    'Combien de gouttes je dois mettre ?',
    'J’ai mal à la tête depuis hier.',
    'Ça me fait mal quand je marche.',
    'L’infirmière passe ce matin ?',
    'Pourquoi je boite depuis hier ?',
    'Je prends mon traitement à jeun ?',
    'J’ai de la température ?',
    'Ma tension est trop haute ?',
    'Je suis tombée dans l’escalier.',
  ])('« %s » is about health', (q) => {
    expect(isHealthQuestion(q)).toBe(true);
    expect(cacheRefusal(q)).toBe('health');
  });

  it.each([
    'Quel temps fera-t-il demain ?',
    'J’ai du mal à trouver mes lunettes.',
    'Où est la boîte aux lettres ?',
    'Tu connais la Marseillaise par cœur ?',
    'Il fait quelle température dehors ?',
    'Ma fille a appelé ?',
  ])('« %s » is not', (q) => {
    expect(isHealthQuestion(q)).toBe(false);
    expect(cacheRefusal(q)).toBeNull();
  });
});

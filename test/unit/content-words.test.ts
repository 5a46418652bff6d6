import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { readCalibrations, thresholdFor } from '../../adapters/semantic-cache-calibration.ts';
import { SemanticCache } from '../../adapters/semantic-cache.ts';
import { contentKey, contentSignature, stem, words } from '../../machines/content-words.ts';
import { CONTRASTS, EQUIVALENTS } from '../../machines/french-lexicon.ts';
import { guardsAgree, questionGuard } from '../../machines/near-miss-guard.ts';

const agree = (a: string, b: string) => guardsAgree(questionGuard(a), questionGuard(b));

describe('content-word guard: the near-misses of issue 11 are misses', () => {
  it.each([
    ['Il fait froid dans ma chambre.', 'Il fait chaud dans ma chambre.'],
    ['Raconte-moi une histoire drôle.', 'Raconte-moi une histoire triste.'],
    ['Tu peux mettre de la musique classique ?', 'Tu peux mettre de la musique bretonne ?'],
    ['Est-ce qu’il va pleuvoir demain ?', 'Est-ce qu’il va neiger demain ?'],
    ['Il faut appeler le docteur.', 'Il faut annuler le docteur.'],
    ["J'ai mal au dos.", "J'ai mal au ventre."],
    ['Où sont mes clés ?', 'Où sont mes lunettes ?'],
    ['Allume la lumière.', 'Éteins la lumière.'],
    ["Ma femme est à l'hôpital.", "Ma femme est rentrée de l'hôpital."],
  ])('« %s » ≠ « %s »', (a, b) => {
    expect(agree(a, b)).toBe(false);
    expect(agree(b, a)).toBe(false);
  });

  it('the issue’s session: « chaud » is never answered with what « froid » got (threshold and guard as shipped)', async () => {
    const embedder = new LocalHashEmbedder();
    const { threshold } = thresholdFor('strict', embedder.modelId, readCalibrations());
    expect(threshold).not.toBeNull();
    const cache = new SemanticCache({ threshold, embedder, agentModelId: 'a', ttlMs: 60_000, maxPerSenior: 10, maxEntries: 10, maxCandidates: 10, budgetMs: 1000 });
    const ask = (question: string) => cache.lookup({ seniorId: 's', question, previous: null, promptVersion: 'p' }, new AbortController().signal);
    const first = await ask('Il fait froid dans ma chambre.');
    cache.store((first as { ticket: unknown }).ticket, 'Merci de me le dire. Comment vous sentez-vous aujourd’hui ?');
    expect((await ask('Il fait chaud dans ma chambre.')).kind).toBe('miss');
    expect((await ask('Il fait froid dans ma chambre.')).kind).toBe('hit');
  });
});

describe('content-word guard: one near-miss of each kind is a miss', () => {
  it.each([
    ['object', 'Où est la télécommande ?', 'Où est mon parapluie ?'],
    ['food', 'Comment on fait une tarte aux pommes ?', 'Comment on fait une tarte aux poires ?'],
    ['body_part', "J'ai mal au genou.", "J'ai mal à l'épaule."],
    ['person (kin)', 'Ma sœur vient dimanche ?', 'Mon frère vient dimanche ?'],
    ['person (name)', 'Tu connais Ginette ?', 'Tu connais Odette ?'],
    ['place', 'La poste est loin ?', 'La mairie est loin ?'],
    ['animal', 'Qu’est-ce que mange un hérisson ?', 'Qu’est-ce que mange un écureuil ?'],
    ['colour', 'Je mets la robe bleue ?', 'Je mets la robe verte ?'],
    ['genre_topic', 'Tu peux me lire un poème ?', 'Tu peux me lire une recette ?'],
    ['adjective', 'Le café est trop sucré ?', 'Le café est trop amer ?'],
    ['adjective (opposite)', 'La soupe est chaude ?', 'La soupe est froide ?'],
    ['verb', 'Tu peux ouvrir la fenêtre ?', 'Tu peux fermer la fenêtre ?'],
    ['verb (other action)', 'Il faut arroser les tomates ?', 'Il faut cueillir les tomates ?'],
    ['quantity', 'Je mets beaucoup de sel ?', 'Je mets peu de sel ?'],
    ['state_change', 'Le chauffage est allumé ?', 'Le chauffage est éteint ?'],
    ['state_change (tense)', 'Mon voisin a déménagé ?', 'Mon voisin va déménager ?'],
    ['time', 'Le car passe à 9h ?', 'Le car passe à 10h ?'],
    ['negation', 'Ma fille a appelé ?', "Ma fille n'a pas appelé ?"],
    ['negation (ne … plus)', 'Mon genou me fait mal quand je marche.', 'Mon genou ne me fait plus mal quand je marche.'],
    ['topic', 'Parle-moi de la guerre.', 'Parle-moi du jardin.'],
    ['whom', 'Tu es fatiguée ?', 'Je suis fatiguée ?'],
    ['whose', 'Où sont mes lunettes ?', 'Où sont ses lunettes ?'],
    ['question word', 'Où est la pharmacie ?', 'Quand ouvre la pharmacie ?'],
    ['until / from', "Jusqu'à quelle heure la poste est ouverte ?", 'La poste ouvre à quelle heure ?'],
    ['preposition', 'Le chat est sur la table ?', 'Le chat est sous la table ?'],
    ['with / without', 'Un café avec du sucre ?', 'Un café sans sucre ?'],
  ])('%s: « %s » ≠ « %s »', (_kind, a, b) => {
    expect(agree(a, b)).toBe(false);
    expect(agree(b, a)).toBe(false);
  });
});

describe('content-word guard: common paraphrases still hit', () => {
  it.each([
    ['Dis-moi une blague.', 'Raconte-moi une blague.'],
    ['Tu connais une blague ?', 'Raconte-moi une blague.'],
    ['Quel temps fera-t-il demain ?', 'Il va faire quel temps demain ?'],
    ['Quel temps fera-t-il demain ?', 'Quelle est la météo de demain ?'],
    ["Qu'est-ce qu'on mange ce soir ?", 'On mange quoi ce soir ?'],
    ['Comment ça va ?', 'Comment vas-tu ?'],
    ['Où est la pharmacie ?', 'La pharmacie, elle est où ?'],
    ['Il faut appeler le docteur.', 'Il faut téléphoner au médecin.'],
    ['Où sont mes clés ?', 'Mes clefs, elles sont où ?'],
    ['Allume la lumière, s’il te plaît.', 'Tu peux allumer la lampe ?'],
    ['Où ai-je posé mes lunettes ?', 'Tu sais où j’ai posé mes lunettes ?'],
    ['Tu me conseilles un film drôle ?', 'Tu connais un film amusant ?'],
    ['Chante-moi une chanson.', 'Tu peux me chanter une chanson ?'],
    ['Il fait froid dehors ?', 'Ça caille dehors ?'],
    ['Explique-moi comment planter des tulipes.', 'Comment on plante des tulipes ?'],
    ['Donne-moi la recette des crêpes.', 'Tu connais la recette des crêpes ?'],
  ])('« %s » = « %s »', (a, b) => {
    expect(agree(a, b)).toBe(true);
    expect(agree(b, a)).toBe(true);
  });
});

describe('content words', () => {
  it('splits elisions and hyphenated imperatives, keeps accents apart from the folded form', () => {
    expect(words("L'hôpital, dis-moi où c'est.")).toEqual({ said: ['l', 'hôpital', 'dis', 'moi', 'où', 'c', 'est'], folded: ['l', 'hopital', 'dis', 'moi', 'ouwh', 'c', 'est'] });
  });

  it('stems inflections to one key, and never below three letters', () => {
    expect(new Set(['chanter', 'chante', 'chantes', 'chantez', 'chantent', 'chantait'].map(stem)).size).toBe(1);
    expect(new Set(['verte', 'verts', 'vert'].map(stem)).size).toBe(1);
    expect(stem('dos')).toBe('dos');
    expect(stem('journaux')).toBe(stem('journal'));
  });

  it('keeps the content words only: stop words, request verbs and numbers drop out', () => {
    expect(contentSignature('Est-ce que tu peux me dire une blague, s’il te plaît ?').key).toBe(contentSignature('Une blague !').key);
    expect(contentSignature('Tu es là ?').key).not.toBe(contentSignature('Tu es ici ?').key); // no content word: only its own words match it
  });

  it('every word of an equivalence group reaches its group, and every contrast joins two different keys', () => {
    for (const group of EQUIVALENTS) {
      const [first, ...rest] = words(group).folded;
      for (const w of rest) expect(contentKey(w), `${w} in « ${group} »`).toBe(contentKey(first!));
    }
    for (const [a, b] of CONTRASTS) expect(contentKey(words(a).folded[0]!)).not.toBe(contentKey(words(b).folded[0]!));
  });
});

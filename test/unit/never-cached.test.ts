import { describe, expect, it } from 'vitest';
import { NEVER_CACHED, questionRefusal } from '../../machines/cache/never-cached.ts';
import { answersThePrevious } from '../../machines/cache/turn-context.ts';
import { repoFile } from '../support/manifests.ts';

describe('what the semantic cache never holds, listed once', () => {
  it('docs/semantic-cache.md quotes every line of NEVER_CACHED, word for word', () => {
    const doc = repoFile('docs/semantic-cache.md');
    const section = doc.slice(doc.indexOf('## Never from the cache'), doc.indexOf('## Keys, lifetime and limits'));
    for (const [reason, what] of Object.entries(NEVER_CACHED)) expect(section).toContain(`- \`${reason}\`: ${what}\n`);
  });

  it('decides the question side: health, a follow-up of health, a follow-up with nothing before it', () => {
    expect(questionRefusal('Je peux prendre mon cachet maintenant ?', null)).toBe('health');
    expect(questionRefusal('Et le soir ?', { question: 'Je prends mon cachet le matin ?' })).toBe('health');
    expect(questionRefusal('Et le soir ?', { question: 'Le marché ouvre le matin ?' })).toBeNull();
    expect(questionRefusal('Et elle, elle va bien ?', null)).toBe('follow_up_without_context');
    expect(questionRefusal('Quel temps fera-t-il demain ?', null)).toBeNull();
    for (const fresh of ['Raconte-moi une blague.', 'Tu connais une devinette ?', 'Tu me chantes une chanson ?', 'Raconte-moi une histoire de pirates.', 'Récite-moi un poème.'])
      expect(questionRefusal(fresh, null), fresh).toBe('fresh_each_time');
    // History is not a story.
    expect(questionRefusal('Raconte-moi l’histoire de la tour Eiffel.', null)).toBeNull();
  });
});

describe('a turn that answers rather than asks', () => {
  it.each(['Oui.', 'Non merci', 'Pas trop.', 'Ma fille.', 'Il fait froid dans ma chambre.', 'Je suis fatiguée'])('« %s » answers the previous exchange', (turn) => {
    expect(answersThePrevious(turn)).toBe(true);
  });
  it.each(['Il pleut ?', 'Où sont mes lunettes', 'Quel temps fait-il', 'Pleut-il', 'Raconte-moi une blague', 'Tu peux allumer la radio', 'Est-ce que ma fille vient', 'Je voudrais une histoire'])('« %s » asks on its own', (turn) => {
    expect(answersThePrevious(turn)).toBe(false);
  });
});

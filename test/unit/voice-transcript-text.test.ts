import { describe, expect, it } from 'vitest';
import { continuesWord, readableLive, SocketFinals } from '../../adapters/voice/transcript-text.ts';

/** Each final of one socket in turn, with the live text its utterance had: the utterances' own texts. */
function utterances(finals: Array<[final: string, live: string]>): string[] {
  const socket = new SocketFinals();
  return finals.map(([final, live]) => socket.take(final, live).text);
}

describe('a socket’s final texts (SocketFinals)', () => {
  it('finals that are each their own utterance are taken whole, even when one begins like the last', () => {
    expect(utterances([['Bonjour, je vais bien.', 'Bonjour, je vais'], ['Je vais au marché demain.', 'Je vais au marché'], ['Bonjour, je vais bien merci.', 'Bonjour, je vais bien']])).toEqual([
      'Bonjour, je vais bien.',
      'Je vais au marché demain.',
      'Bonjour, je vais bien merci.',
    ]);
  });

  it('a cumulative final gives what follows the earlier finals: case, punctuation and spacing aside', () => {
    expect(
      utterances([
        ['Bonjour, je vais bien.', 'Bonjour, je vais'],
        ['bonjour je vais  bien. Et vous, ça va ?', 'Et vous, ça'],
        ['Bonjour, je vais bien. Et vous, ça va ? Il fait beau.', 'Il fait'],
      ]),
    ).toEqual(['Bonjour, je vais bien.', 'Et vous, ça va ?', 'Il fait beau.']);
  });

  it('the senior saying the same sentence again, or again and more, on a service that does not repeat: each turn has what was said', () => {
    const same = 'Je suis allée au marché ce matin avec ma fille';
    expect(utterances([[same, same], [same, same], [`${same}, et on a acheté des fraises`, same]])).toEqual([same, same, `${same}, et on a acheté des fraises`]);
    // A word or two again with no live text at all (held until the flush): taken as said.
    expect(utterances([['Oui.', ''], ['Oui.', ''], ['Oui, merci.', 'Oui']])).toEqual(['Oui.', 'Oui.', 'Oui, merci.']);
  });

  it('the senior saying the same sentence again on a service that repeats: the final holds it twice, the turn once', () => {
    const same = 'Je suis allée au marché ce matin avec ma fille';
    expect(utterances([[same, same], [`${same}. ${same}`, same]])).toEqual([same, same]);
  });

  it('a pause re-asked with nothing new on a repeating socket (the early flush’s recheck) adds nothing, and the socket’s words stay right', () => {
    expect(utterances([['Le chiffre 7 en langage des', 'Le chiffre 7 en'], ['Le chiffre 7 en langage des', ''], ['Le chiffre 7 en langage des signes américain.', 'signes']])).toEqual([
      'Le chiffre 7 en langage des',
      '',
      'signes américain.',
    ]);
    expect(utterances([['Oui', ''], ['Oui', ''], ['Oui merci', 'merci']])).toEqual(['Oui', 'Oui', 'merci']);
  });

  it('on a socket known to repeat its finals, a final that revised an earlier word is cut where it matches them best', () => {
    const socket = new SocketFinals();
    socket.take('Mon petit-fils vient dimanche', '');
    expect(socket.take('Mon petit-fils vient dimanche avec sa femme et ses enfants', 'avec sa femme')).toEqual({ text: 'avec sa femme et ses enfants', repeated: 5 });
    // « petit-fils » written as two words (the same two, compared), « enfants » revised: 11 words repeated.
    expect(socket.take('Mon petit fils vient dimanche avec sa femme et ses enfant. Nous irons au parc.', 'Nous irons au')).toEqual({ text: 'Nous irons au parc.', repeated: 11 });
    // A final that revised too much of them is not cut.
    expect(socket.take('Ma petite fille viendra lundi sans son mari ni les enfants. Nous irons au parc. Et au musée.', 'Et au').repeated).toBe(0);
  });

  it('after a short final, the utterance’s live text tells a repetition by the senior from the service’s', () => {
    // The service repeats « Oui » before the new words; the live text did not begin with it.
    expect(utterances([['Oui.', 'Oui'], ['Oui. Merci beaucoup.', 'Merci beaucoup']])).toEqual(['Oui.', 'Merci beaucoup.']);
    // The senior said « Oui » again: the live text begins with it, the final holds it once.
    expect(utterances([['Oui.', 'Oui'], ['Oui, merci beaucoup.', 'Oui, merci']])).toEqual(['Oui.', 'Oui, merci beaucoup.']);
    // … and twice when the service repeats it too.
    expect(utterances([['Oui.', 'Oui'], ['Oui. Oui, merci beaucoup.', 'Oui, merci']])).toEqual(['Oui.', 'Oui, merci beaucoup.']);
    // The same word alone again is the senior's.
    expect(utterances([['Oui.', 'Oui'], ['Oui.', 'Oui']])).toEqual(['Oui.', 'Oui.']);
  });

  it('a socket that answered separately once is not taken for a cumulative one later', () => {
    expect(utterances([['Je voudrais un café.', 'Je voudrais un'], ['Je voudrais un thé.', 'Je voudrais un'], ['Je voudrais un café, je voudrais un thé et des biscuits.', 'Je voudrais un café,']])).toEqual([
      'Je voudrais un café.',
      'Je voudrais un thé.',
      'Je voudrais un café, je voudrais un thé et des biscuits.',
    ]);
  });

  it('counts what it holds, so a socket whose finals grow without end can be replaced', () => {
    const socket = new SocketFinals();
    socket.take('un deux trois', '');
    socket.take('un deux trois quatre cinq', 'quatre');
    expect(socket.words).toBe(5);
  });
});

describe('live text in word fragments', () => {
  it('tells a piece continuing a word from a new word', () => {
    expect(continuesWord('Je reviens de', 'main')).toBe(true);
    expect(continuesWord('Je reviens de', ' main')).toBe(false);
    expect(continuesWord('Je reviens.', 'Demain')).toBe(false);
    expect(continuesWord('', 'Je')).toBe(false);
  });

  it('from a service that sends pieces, ends at the last whole word: « de » of « demain » is never read as « de »', () => {
    expect(readableLive('Je reviens de', true)).toBe('Je reviens');
    expect(readableLive('Je reviens demain', true)).toBe('Je reviens');
    expect(readableLive('Je reviens demain ', true)).toBe('Je reviens demain ');
    expect(readableLive('Je reviens demain.', true)).toBe('Je reviens demain.');
    expect(readableLive('Bon', true)).toBe('');
    // A service that sends whole words: all of it.
    expect(readableLive('Je reviens de', false)).toBe('Je reviens de');
  });
});

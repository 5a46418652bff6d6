import { describe, expect, it } from 'vitest';
import { SentenceChunker } from '../../machines/voice/sentence-chunker.ts';

/** Streams `text` in deltas of `size` characters, like a model's tokens. */
function chunk(text: string, size: number): string[] {
  const chunker = new SentenceChunker();
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(...chunker.push(text.slice(i, i + size)));
  pieces.push(...chunker.flush());
  expect(chunker.consumed).toBe(text.length);
  return pieces;
}

describe('SentenceChunker', () => {
  it('cuts sentences on . ! ? … with French spacing, at any delta size', () => {
    const text = 'Bonjour Jeanne ! Comment allez-vous ? Il fait beau… Votre fils vient demain.';
    for (const size of [1, 3, 7, text.length]) {
      expect(chunk(text, size)).toEqual(['Bonjour Jeanne !', 'Comment allez-vous ?', 'Il fait beau…', 'Votre fils vient demain.']);
    }
  });

  it('never cuts after « M. », « Mme », « Dr », « St » or an initial', () => {
    const text = 'Oui. M. Dupont et Mme. Martin ont vu le Dr. Lefèvre rue St. Jacques avec J. Durand. Ensuite ils sont partis.';
    for (const size of [1, 4, text.length]) {
      expect(chunk(text, size)).toEqual(['Oui.', 'M. Dupont et Mme. Martin ont vu le Dr. Lefèvre rue St. Jacques avec J. Durand.', 'Ensuite ils sont partis.']);
    }
  });

  it('keeps « 3,5 », « 12.30 » and « 10 h 30 » whole even when a delta ends on the mark', () => {
    const chunker = new SentenceChunker();
    expect(chunker.push('Il reste 3,')).toEqual([]);
    expect(chunker.push('5 kilos. Le bus passe à 12.')).toEqual(['Il reste 3,5 kilos.']);
    expect(chunker.push('30 ou à 10 h 30. Bon')).toEqual(['Le bus passe à 12.30 ou à 10 h 30.']);
    expect(chunker.flush()).toEqual(['Bon']);
  });

  it('sends the first clause early when it has four words or more, and only the first', () => {
    const chunker = new SentenceChunker();
    expect(chunker.push('Je me souviens très bien, vous ')).toEqual(['Je me souviens très bien,']);
    expect(chunker.consumed).toBe('Je me souviens très bien,'.length);
    expect(chunker.push("m'avez parlé de Lucie, votre petite-fille. ")).toEqual(["vous m'avez parlé de Lucie, votre petite-fille."]);
    expect(chunk('Oui, bien sûr. Voilà.', 2)).toEqual(['Oui, bien sûr.', 'Voilà.']);
  });

  it('reports where each piece ends in the reply (for the marks)', () => {
    const chunker = new SentenceChunker();
    const reply = '  Bonjour Paul.   Quel plaisir !  ';
    expect(chunker.push(reply)).toEqual(['Bonjour Paul.', 'Quel plaisir !']);
    expect(reply.slice(0, chunker.consumed).trim().endsWith('Quel plaisir !')).toBe(true);
    expect(chunker.flush()).toEqual([]);
    expect(chunker.consumed).toBe(reply.length);
  });

  it('speaks a reply without punctuation in bounded pieces, not all at the end', () => {
    const words = Array.from({ length: 120 }, (_, i) => `mot${i}`).join(' ');
    const chunker = new SentenceChunker();
    const early = chunker.push(words);
    expect(early.length).toBeGreaterThan(0);
    for (const piece of early) expect(piece.length).toBeLessThanOrEqual(300);
    expect([...early, ...chunker.flush()].join(' ')).toBe(words);
  });
});

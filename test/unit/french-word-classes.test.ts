import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { questionGuard } from '../../machines/cache/near-miss-guard.ts';
import {
  AVOIR,
  AVOIR_PRESENT,
  AVOIR_USUAL,
  BEFORE_CLITIC,
  BEFORE_CLITIC_OR_CA,
  CLITICS,
  CONJUNCTIONS,
  DETERMINERS,
  ETRE_PRESENT,
  ETRE_USUAL,
  HESITATIONS,
  POSSESSIVES,
  PREPOSITIONS,
  SUBJECT_PRONOUNS,
} from '../../machines/french/word-classes.ts';
import { words } from '../../machines/french/words.ts';
import { turnCue } from '../../machines/voice/end-of-turn.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const fold = (w: string) => w.normalize('NFD').replace(/\p{Diacritic}/gu, '');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every list of words written out in code: a run of quoted words after a bracket (comment lines between), or one string of space-separated words. */
function literalLists(text: string): string[][] {
  const lists: string[][] = [];
  for (const [inside] of text.matchAll(/\[(?:\s*(?:\/\/[^\n]*\n)?\s*'[^'\n]*',?)+/g)) lists.push([...inside.matchAll(/'([^'\n]*)'/g)].map((m) => fold(m[1]!)));
  for (const [, spaced] of text.matchAll(/'([\p{L}]+(?: [\p{L}]+){3,})'/gu)) lists.push(spaced!.split(' ').map(fold));
  return lists;
}

describe('French in one room', () => {
  // A class whose every word sits in a list written outside machines/french/ is a second copy of it.
  const classes: Record<string, readonly string[]> = {
    POSSESSIVES,
    SUBJECT_PRONOUNS,
    CLITICS,
    'AVOIR (present)': [...AVOIR_PRESENT],
    'ETRE (present)': [...ETRE_PRESENT],
    PREPOSITIONS,
    CONJUNCTIONS,
    HESITATIONS,
  };

  it('lists each word class once: no copy of one in machines/, adapters/ or runtime/ outside machines/french/', () => {
    const copies: string[] = [];
    for (const layer of ['machines', 'adapters', 'runtime']) {
      for (const file of sources(join(ROOT, layer))) {
        if (relative(ROOT, file).startsWith(join('machines', 'french'))) continue;
        for (const list of literalLists(readFileSync(file, 'utf8'))) {
          for (const [name, members] of Object.entries(classes)) if (members.every((w) => list.includes(fold(w)))) copies.push(`${relative(ROOT, file)}: ${name}`);
        }
      }
    }
    expect(copies).toEqual([]);
  });

  it('keeps the narrower lists its callers were calibrated with as named subsets of one definition', () => {
    expect(AVOIR_PRESENT.size).toBe(6);
    expect(AVOIR_USUAL.size).toBe(12);
    expect(AVOIR.size).toBe(24);
    expect([...AVOIR_PRESENT].every((f) => AVOIR_USUAL.has(f)) && [...AVOIR_USUAL].every((f) => AVOIR.has(f))).toBe(true);
    expect([...ETRE_PRESENT].every((f) => ETRE_USUAL.has(f))).toBe(true);
    expect([...BEFORE_CLITIC_OR_CA].filter((w) => !BEFORE_CLITIC.has(w))).toEqual(['ca']);
  });

  it('ends no turn on a determiner: the end-of-turn cues read the classes the guard reads', () => {
    // The single letters are elisions, said with their apostrophe (« l' »), which ends no turn either.
    for (const d of [...DETERMINERS].filter((w) => w.length > 1)) {
      expect(turnCue(`Je cherche ${d}`), d).toBe('unfinished');
      expect(words(`Je cherche ${d}`).folded.at(-1)).toBe(d);
    }
    // the guard tells a noun after a determiner by its gender: « le poste » is not « la poste ».
    expect(questionGuard('Où est le poste ?').content.nounGenders).not.toEqual(questionGuard('Où est la poste ?').content.nounGenders);
  });
});

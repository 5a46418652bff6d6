/**
 * The French tokenizer: a sentence into its words, as said and folded, keeping what lower case and
 * punctuation lose (capitals, clause boundaries). Pure and cheap: one pass of regexes.
 */

/**
 * The question's words as said (lower case, accents kept: « à » is not « a », « déménagé » is a
 * participle) and folded (accents off: what the lexicon is matched against). Elisions and
 * hyphens split words: « l'hôpital » → « l », « hôpital »; « dis-moi » → « dis », « moi ».
 */
export interface Words {
  said: string[];
  folded: string[];
  capital: boolean[];
  boundary: Set<number>;
}
export function words(text: string): Words {
  const said: string[] = [];
  // What lower case loses: capitals (names: « Claire ») and punctuation (where a clause ends).
  const capital: boolean[] = [];
  const boundary = new Set<number>();
  const raw = text
    .normalize('NFC')
    .replace(/[’'`\-]/g, ' ')
    .replace(/[,;:.?!…]/g, ' \u0001 ')
    .replace(/[^\p{L}\p{N}\s\u0001]/gu, ' ')
    .split(/\s+/);
  for (const r of raw) {
    if (r === '') continue;
    if (r === '\u0001') {
      boundary.add(said.length);
      continue;
    }
    const lower = r.toLowerCase();
    capital.push(r[0] !== lower[0]);
    said.push(lower.includes('œ') || lower.includes('æ') ? lower.replace(/œ/g, 'oe').replace(/æ/g, 'ae') : lower);
  }
  // « où » (where) would fold to « ou » (or).
  const folded = said.map((w) => (w === 'où' ? 'ouwh' : /[^a-z0-9]/.test(w) ? w.normalize('NFD').replace(/\p{Diacritic}/gu, '') : w));
  return { said, folded, capital, boundary };
}
/** A word list's words folded as the tokenizer folds them (« Pâques » → « paques »). */
export const fold = (list: string): string[] => words(list).folded;

/** Lower case, accents folded, apostrophes and hyphens as spaces: « aujourd'hui » → « aujourd hui ». */
export function normalizeQuestion(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase()
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae')
    .replace(/[’'`\-]/g, ' ')
    .replace(/[^\p{L}\p{N}:h\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

import { LATIN_LOOKALIKE } from './lookalikes.ts';

/*
 * What a reader sees of a text, as the verbatim guard compares it: a summary spelled with
 * Cyrillic « а е о р с », invisible characters inside its words or quotation marks of another
 * script reads, to the caregiver, exactly like the sentence it copies.
 */

/** The look-alikes as one character class: the engine scans for them, a replacement runs only where one is. */
const LOOKALIKE = new RegExp(`[${[...LATIN_LOOKALIKE.keys()].join('')}]`, 'gu');
const latin = (c: string) => LATIN_LOOKALIKE.get(c)!;

/**
 * Characters a reader does not see: combining marks (accents, once NFKD has split them off;
 * strike-through and other overlays), format characters (zero-width space, joiners, word joiner,
 * BOM, soft hyphen, bidi controls, tags), control characters other than whitespace, and the blank
 * letters and symbols Unicode draws as nothing (Hangul fillers, the blank Braille pattern).
 */
const INVISIBLE = /[\p{M}\p{Cf}\x00-\x08\x0E-\x1F\x7F-\x84\x86-\x9F\u115F\u1160\u3164\uFFA0\u2800]/gu;

/**
 * Apostrophe look-alikes (the characters UTS #39 gives the prototype U+0027): an apostrophe when
 * between two letters (« l’hôpital »), a single quotation mark anywhere else (‘…’, ‚…‛, ′…′).
 */
const SINGLE_MARK = /['‘’‚‛′‵`ʹʻʼʽʾˈˊˋ˴ꞌ՚՝׳ߴߵ❛❜]/gu;
const NOT_AN_APOSTROPHE = /(?<![\p{L}\p{N}])'|'(?![\p{L}\p{N}])/gu;
/**
 * Quotation marks of every script: initial and final quote punctuation (« » “ ” ‹ › ‟ ⸂ ⸃…),
 * low and East Asian ones („ 「 」 『 』 〝 〞 〟, their half-width and vertical forms once
 * NFKD-folded), UTS #39's look-alikes of U+0022 (ʺ ˮ ˝ ˶ 〃 ״), the dingbat and ornament
 * quotes, and « written << ».
 */
const DOUBLE_MARK = /<<|>>|["\p{Pi}\p{Pf}„「」『』〝〞〟⹂ʺˮ˝˶〃״᳓❝❞❮❯🙶🙷🙸]/gu;
/** UTS #39's look-alikes of the colon that NFKD leaves (ː and ꓽ are letters): « a dit ː » reports speech too. */
const COLON = /[ːꓽ꞉˸∶։׃܃܄᛬᠃᠉⁚ःઃ]/gu;

/**
 * The text as a reader sees it, for comparison only (never stored, never shown):
 * - look-alike letters of other scripts read as their Latin letter (lookalikes.ts), before NFKD
 *   (ϲ would become Σ) and after it (mathematical 𝚨 becomes Greek Α);
 * - NFKD: full-width, mathematical, circled and other compatibility forms to plain characters,
 *   accents split off — then dropped with every other invisible character. Accents are folded
 *   because a reader takes « é » and « e » for the same word, speech recognition drops or moves
 *   them, and the guard's word lists (« apres », « fevrier », « ca ») are written without;
 * - ligatures œ æ spelled out;
 * - every quotation mark to `"` (a run of them, such as ″ decomposed into ′′, is one mark), every
 *   apostrophe between two letters to `'`, every colon to `:`.
 * Case is kept (proper names are read from capitals).
 */
export function readerFold(text: string): string {
  return text
    .replace(LOOKALIKE, latin)
    .normalize('NFKD')
    .replace(INVISIBLE, '')
    .replace(LOOKALIKE, latin)
    .replace(/œ/g, 'oe')
    .replace(/Œ/g, 'OE')
    .replace(/æ/g, 'ae')
    .replace(/Æ/g, 'AE')
    .replace(SINGLE_MARK, "'")
    .replace(NOT_AN_APOSTROPHE, '"')
    .replace(DOUBLE_MARK, '"')
    .replace(/"+/g, '"')
    .replace(COLON, ':');
}

/**
 * A light French stemmer for verbs the lexicon does not list: plural, feminine and the common verb
 * endings, one suffix at most, never below three letters (« arroser » / « arrose » / « arrosé »).
 * It never joins a word with a listed one (see machines/cache/content-words.ts, contentKey), and a noun keeps its own form.
 */
const SUFFIXES: ReadonlyArray<readonly [string, number]> = [
  ['issions', 3], ['issiez', 3], ['issent', 3], ['issons', 3], ['issez', 3], ['issait', 3], ['issais', 3],
  ['eraient', 3], ['erions', 3], ['eriez', 3], ['erait', 3], ['erais', 3], ['erons', 3], ['eront', 3], ['erai', 3], ['eras', 3], ['era', 3], ['erez', 3],
  ['aient', 3], ['ions', 3], ['iez', 3], ['ait', 3], ['ais', 3], ['ant', 4], ['ent', 4], ['ons', 3], ['ez', 3], ['er', 3], ['ir', 3], ['ee', 3], ['ie', 3], ['e', 3], ['i', 3],
];
export function stem(word: string, infinitive = true): string {
  // « -yer » verbs write « i » before a silent « e »: « envoie », « nettoient », « essuie » are « envoy- », « nettoy- », « essuy- ».
  let w = word.length > 4 ? word.replace(/([aou])i(e|es|ent)$/, '$1y$2') : word;
  if (w.length <= 3) return w;
  if (w.endsWith('eaux')) w = w.slice(0, -1);
  else if (w.endsWith('aux')) w = `${w.slice(0, -3)}al`;
  else if (/[sx]$/.test(w)) w = w.slice(0, -1);
  for (const [suffix, keep] of SUFFIXES) {
    // « -er », « -ir » end an infinitive only where one stands; elsewhere a noun (« en hiver », « le plaisir »).
    if ((suffix === 'er' || suffix === 'ir') && !infinitive) continue;
    if (w.endsWith(suffix) && w.length - suffix.length >= keep) return w.slice(0, -suffix.length);
  }
  return w;
}

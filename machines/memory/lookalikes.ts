/**
 * Letters other scripts and Unicode blocks draw like a Latin letter, by the letter a reader sees:
 * Cyrillic а е о р с, Greek ο ρ ν, Armenian օ, Cherokee, Lisu, Coptic, Canadian syllabics, Latin
 * small capitals and stroked letters Unicode does not decompose (ł ø đ ħ ŧ)…
 *
 * Source: Unicode Technical Standard #39, `confusables.txt` 13.0.0 (the data of the npm package
 * unhomoglyph 1.0.6), filtered to what a French reader would take for a Latin letter: a single
 * non-ASCII character, no currency sign, that NFKD and accent stripping do not already turn into a
 * Latin letter or digit, whose prototype — NFKD, accents off, lowercased, a Latin small capital
 * (ʙ ʜ ᴛ ĸ ʍ…, UTS #39's prototypes of lowercase Cyrillic в н т к м) read as its letter — is one
 * letter a–z; the small capitals themselves added; entries NFKD turns into another entry of the
 * same letter left out (the fold decomposes first: mathematical 𝚨 becomes Greek Α, listed here).
 * ASCII letters are never remapped (UTS #39's m → rn, I → l would make every French word unreadable
 * to the guard's other rules).
 */
const LOOKALIKES: Record<string, string> = {
  a: 'ɑΑαАаᎪᗅᴀẚ⍶⍺ꓮꭺ𐊠𖽀',
  b: 'ƀƂƃƄɓʙΒβБВЬвѢѣҌҍᏏᏰᏴᏼᑲᑳᖯᗷꓐꞴꞵ𐊂𐊡𐌁',
  c: 'ȼϲϹСсҪҫᏟᴄⲤⲥꓚꮯ𐊢𐌂𐐕𐐽𐔜𑣩𑣲🅮🝌',
  d: 'ÐĐđƉƌɖɗԁᎠᏧᑯᗞᗪᴅꓒꓓꭰ',
  e: 'ɆɇɛΕεЄЕеєҽҿԑᎬᴇ℮⋴⋿⍷Ⲉⲉⴹꓰꞓꬲꭼꮛ𐊆𐐩𑢦𑢮𑣎',
  f: 'ƑƒϜքᖴᵮẝꓝꞘꞙꬵ𐊇𐊥𐔥𑢢𑣂𝈓',
  g: 'ƍǤǥɠɡɢԌԍցᏀᏳᏻᶃꓖꮐ',
  h: 'ĦħɦʜΗНнћҢңһӇӈӉӊհᎻᏂᏲᕼⱧⲎꓧꚕꮋ𐋏',
  i: 'ıɨɩɪ˛ͺιіӏᎥᵻᵼ⍳⍸ꙇꭵ𑣃',
  j: 'ɈɉͿϳЈјᎫᒍᴊꓙꞲꭻ',
  k: 'ĸƙΚκКкҚқҞҟᏦᛕᴋⱩⲔⲕꓗꝀꮶ𐔘',
  l: 'ŁłƖƗƚǀɫɭʟΙІӀ׀וןا١ٳ۱ߊᏞᒪᛁ∣⏽ⲒⳐⳑⵏꓡꓲꮮ￨𐊊𐌉𐌠𐐛𐑃𐔦𑢣𑢲𖼖𖼨𝈪𞣇',
  m: 'ʍΜϺМмӍӎᎷᗰᛖᴍⲘꓟꮇ𐊰𐌑',
  n: 'ƝƞɳɴΝηոռᵰⲚꓠ𐆎𐔓',
  o: 'ØøƟɵΘΟθοσОоѲѳӨөՕօסه٥ھہە۵ۿ߀०০੦૦ଠ୦௦ం౦ಂ೦ംഠ൦ං๐໐တဝ၀ჿዐ' +
    'ᎾᏫᴏᴑ⊖⊝⍬Ⲟⲟⴱⵁⵔ〇ꓳꝊꝋꬽꬾꭴꮎꮻ𐊒𐊫𐐄𐐬𐓂𐓪𐔖𑓐𑢵𑣈𑣗𑣠𝈚🜔',
  p: 'ƥΡρРрᏢᑭᴘᴩᵽ⍴Ⲣⲣꓑꮲ𐊕',
  q: 'ʠԛգզⵕ',
  r: 'ƦɍɼɽʀгғᎡᏒᖇᴦᵲⲅꓣꭇꭈꭱꮁꮢ𐒴𖼵𝈖',
  s: 'ƽʂЅѕՏᏕᏚᵴꓢꜱꮪ𐊖𐐠𐑈𑣁𖼺',
  t: 'ŦŧƭƮȾΤτТтҬҭᎢᴛᵵ⊤⍡⟙Ⲧꓔꭲ𐊗𐊱𐌕𑢼𖼊🝨',
  u: 'ɄʋυՍսሀᏌᑌᴜᵾ∪⋃ꓴꞟꭎꭒꮜ𐓎𐓶𑢸𑣘𖽂',
  v: 'νѴѵט٧۷Ꮩᐯᴠ∨⋁ⴸꓦꛟꮩ𐆗𐔝𑜆𑢠𑣀𖼈𝈍🜈',
  w: 'ɯѡѽԜԝաᎳᏔᴡꓪꝡꮃ𑓅𑜊𑜎𑜏𑣦𑣯',
  x: '×ΧХхҲᕁᕽ᙭᙮ᚷ╳⤫⤬⨯⨰ⲬⵝꓫꞳ𐆖𐊐𐊴𐌗𐌢𐔧𑣬',
  y: 'ƴɎɏɣʏΥγУуҮүҰұყᎩᎽᶌỿⲨꓬꭚ𐊲𑢤𑣜𖽃',
  z: 'ƵƶȤȥʐΖᏃᴢᵶꓜꮓ𐋵𑢩𑣄𑣥',
};

/** Each look-alike to its Latin letter, in the case it is drawn in. */
export const LATIN_LOOKALIKE: ReadonlyMap<string, string> = new Map(
  Object.entries(LOOKALIKES).flatMap(([letter, lookalikes]) => [...lookalikes].map((c) => [c, /\p{Lu}/u.test(c) ? letter.toUpperCase() : letter] as const)),
);

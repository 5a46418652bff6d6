import { describe, expect, it } from 'vitest';
import { VERBATIM_SPELLED_LETTERS, verbatimGuard, verbatimSourcesOf, verbatimWords, type Exchange, type VerbatimRule } from '../../machines/memory/derivation.ts';
import { readerFold } from '../../machines/memory/reader-fold.ts';

/*
 * Issue 33, item 5: the verbatim guard compares what a reader sees. Each text below reads, to a
 * caregiver, like a copy of the session — spelled with look-alike letters, invisible characters,
 * spacing tricks or another script's quotation marks — and must be refused; the near-misses
 * (paraphrases, one word in « guillemets », accents, French typography) must still pass.
 */

const session: Exchange[] = [
  { transcript: 'ce matin je suis allée au marché avec ma voisine Josiane et nous avons acheté des fraises', replyText: 'Quelle bonne idée, les fraises sont délicieuses en cette saison.' },
  { transcript: "ma fille Claire habite à Lyon et elle vient le 14 juillet, je dois aller à l'hôpital mardi", replyText: 'Claire vous rend souvent visite ? Lyon n’est pas si loin.' },
  { transcript: 'bonjour ça va', replyText: 'Bonjour Marie, je suis content de vous entendre.' },
];
const guard = verbatimGuard(verbatimSourcesOf(session));
const [{ transcript }] = session as [Exchange];

/** The attack: Latin a e o p c swapped for the Cyrillic letters drawn the same. */
const cyrillic = (text: string) => text.replace(/[aeopc]/g, (c) => 'аеорс'['aeopc'.indexOf(c)]!);

/** Each text with the rule it must break, or null when it must pass. */
const judged = (cases: ReadonlyArray<readonly [string, VerbatimRule | null]>) => {
  for (const [text, rule] of cases) expect([text, guard(text)]).toEqual([text, rule]);
};

describe('the verbatim guard reads what a reader sees (issue 33, item 5)', () => {
  it('refuses the whole transcript spelled with Cyrillic а е о р с, and a copied clause in Greek or Armenian letters', () => {
    expect(cyrillic(transcript)).not.toBe(transcript);
    judged([
      [cyrillic(transcript), 'run'],
      [`Le senior a raconté que ${cyrillic('sa fille Claire habite à Lyon')}.`, 'run'],
      ['Le senior a raconté que sα fιlle Clαιre hαbιte à Lyοn.', 'run'],
      ['Le senior a raconté que sա fille Claire հabite à Lyօn.', 'run'],
      ['Le senior a écrit ᏟᎬ ᎷᎪᎢᎥN ᎫᎬ ᏚUᎥᏚ ᎪᏞᏞÉᎬ, en lettres cherokee.', 'run'],
      [cyrillic('Le senior a ouvert par bonjour ça va.'), 'utterance'],
    ]);
  });

  it('refuses mixed-script words: one look-alike per word, from several scripts', () => {
    judged([
      ['Elle a dit que sа fіlle Clаirе hаbitе à Lyοn.', 'run'],
      ['Le compagnon a répété je suіs contеnt dе vοus еntеndrе.', 'run'],
      ['Elle doit aller à lʼhôpital mardi prochain.', 'run'],
      ['Еllе а dіt : tout va bien.', 'quote'],
      ['Elle a dit ː tout va bien.', 'quote'],
    ]);
  });

  it('refuses invisible characters inside words: Hangul fillers, the blank Braille pattern, control characters', () => {
    judged([
      ['Le senior a raconté que sa fi\u3164lle Cla\u115Fire habite à Lyon.', 'run'],
      ['Le senior a raconté que sa fil\u2800le Claire hab\u2800ite à Lyon.', 'run'],
      ['Le senior a raconté que sa fi\u0007lle Claire ha\u001Bbite à Lyon.', 'run'],
      ['Le senior a raconté que sa fi\uFFA0lle Cla\u200Bire ha\u2060bi\u00ADte à Ly\u202Eon.', 'run'],
    ]);
  });

  it('refuses spacing tricks: letters spaced out or split by punctuation or hair spaces', () => {
    judged([
      ['Le senior a raconté que s a f i l l e C l a i r e h a b i t e à L y o n.', 'run'],
      ['Le senior a raconté que s.a.f.i.l.l.e.C.l.a.i.r.e h.a.b.i.t.e à L.y.o.n.', 'run'],
      ['Le senior a raconté que sa fi-lle Cl-ai-re ha-bi-te à Ly-on.', 'run'],
      ['Le senior a raconté que sa fil\u200Ale Cla\u200Aire ha\u200Abite à Lyon.', 'run'],
      ['Il a ouvert par b o n j o u r ç a v a, puis a parlé du marché.', 'utterance'],
    ]);
  });

  it('reads quotation marks of every script as quotation marks', () => {
    judged(
      [
        'Le senior parle de ‘sa fille’ souvent.',
        'Le senior parle de 「sa fille」 souvent.',
        'Le senior parle de 『sa fille』 souvent.',
        'Le senior parle de 〝sa fille〞 souvent.',
        'Le senior parle de ‚sa fille‛ souvent.',
        'Le senior parle de ″sa fille″ souvent.',
        "Le senior parle de 'sa fille' souvent.",
        "Le senior parle de ''sa fille'' souvent.",
        'Le senior parle de <<sa fille>> souvent.',
        'Le senior parle de ❝sa fille❞ souvent.',
        'Le senior parle de ⸌sa fille⸍ souvent.',
        'Le senior parle de ˮsa filleˮ souvent.',
      ].map((text) => [text, 'quote'] as const),
    );
  });

  it('sees through full-width and half-width forms: letters, apostrophes, corner brackets', () => {
    judged([
      ['Le senior parle de ｢ｓａ ｆｉｌｌｅ｣ souvent.', 'quote'],
      ['Le senior parle de ＇sa fille＇ souvent.', 'quote'],
      ['Le senior a raconté que ｓａ ｆｉｌｌе Ｃｌａｉｒе habite à Lyon.', 'run'],
    ]);
  });

  it('refuses combining marks and the marked letters Unicode does not decompose (ł ø đ ħ ŧ)', () => {
    judged([
      ['Le senior a raconté que sa fiłłe Cłaire habite à Łyon.', 'run'],
      ['Le senior a raconté que sa fille Claire habiŧe à Lyøn.', 'run'],
      ['Le senior a raconté que s̶a̶ ̶f̶i̶l̶l̶e̶ Claire ħabite à Lyon.', 'run'],
      ['Ce maŧin je suis allée au marcħé.', 'run'],
    ]);
  });

  it('lets near-misses through: paraphrases, one word in any quotation marks, accents and French typography', () => {
    judged(
      [
        'Sa fille Claire vit à Lyon et lui rendra visite le 14 juillet.',
        'Le senior a évoqué une sortie au marché avec sa voisine Josiane, et des fraises achetées ensemble.',
        'Il a évoqué le « tricot » et la chorale.',
        'Il a évoqué le\u00A0«\u202Ftricot\u202F» et la chorale\u202F; il semblait serein\u202F!',
        'Il a évoqué le ‘tricot’, le 「jardin」 et le “marché”.',
        'Elle a été très émue par la fête de l’école ; aujourd’hui elle se sent mieux.',
        "Elle a rendez-vous à l'hôpital mardi et s'inquiète un peu.",
        'Elle a payé 10 € au marché, soit 3 × moins que l’an dernier.',
        'Sa fille habite à Lyon ; elle est allée au marché avec sa voisine.',
        'Le senior est de bonne humeur : il a salué son compagnon.',
      ].map((text) => [text, null] as const),
    );
  });

  it('reads letters across separators only from a word’s start to a word’s end: a shared prefix is no copy', () => {
    for (const [said, text] of [
      ["Raconte-moi une histoire d'amour.", 'Raconte-moi une histoire drôle.'],
      ["Qu'est-ce que j'ai mangé hier midi ?", "Qu'est-ce que je mange demain midi ?"],
      ['Mets-moi une chanson d’Aznavour.', 'Mets-moi une chanson de Brassens.'],
    ] as const) {
      expect([text, verbatimGuard(verbatimSourcesOf([{ transcript: said, replyText: 'Volontiers.' }]))(text)]).toEqual([text, null]);
    }
  });

  it('folds for comparison only: look-alikes to Latin letters, every quotation mark to ", apostrophes kept', () => {
    expect(readerFold('Сlаіrе')).toBe('Claire');
    expect(readerFold('‘a’ 「b」 « c » l’hôpital')).toBe('"a" "b" " c " l\'hopital');
    expect(verbatimWords('lʼhôpital')).toEqual(['l', 'hopital']);
    expect(VERBATIM_SPELLED_LETTERS).toBe(10);
  });
});

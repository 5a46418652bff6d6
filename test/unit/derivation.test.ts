import { afterEach, describe, expect, it, vi } from 'vitest';
import { neutralValue, OfflineLanguageModel } from '../../adapters/models/offline-language-model.ts';
import { MistralSmallConsolidator, type Consolidation } from '../../adapters/subagents/mistral-small-consolidator.ts';
import { MistralSmallConversationSummarizer } from '../../adapters/subagents/mistral-small-conversation-summarizer.ts';
import { MistralSmallMemoryExtractor } from '../../adapters/subagents/mistral-small-memory-extractor.ts';
import { MistralSmallMoodClassifier } from '../../adapters/subagents/mistral-small-mood-classifier.ts';
import { MistralSmallSegmentSummarizer } from '../../adapters/subagents/mistral-small-segment-summarizer.ts';
import { MistralSmallWindowSummarizer } from '../../adapters/subagents/mistral-small-window-summarizer.ts';
import {
  echoesTranscriptVerbatim,
  moodTier,
  VERBATIM_QUOTE_WORDS,
  VERBATIM_RUN_WORDS,
  VERBATIM_UTTERANCE_WORDS,
  verbatimGuard,
  verbatimSourcesOf,
  verbatimWords,
  type Exchange,
} from '../../machines/memory/derivation.ts';
import { createLogger } from '../../runtime/logger.ts';
import { scriptedModel } from '../support/models.ts';
import { LogCapture } from '../support/runtime.ts';

const exchange = {
  transcript: 'Ce matin je suis allée au marché avec ma voisine Josiane et nous avons acheté des fraises',
  replyText: 'Quelle bonne idée, les fraises sont délicieuses en cette saison.',
};
const good = { content: 'Elle fait le marché avec sa voisine Josiane.', category: 'contacts', confidence: 0.9 };
const logs = new LogCapture();
const logger = createLogger('warn', logs);

afterEach(() => vi.useRealTimers());

describe('mood tiers', () => {
  it.each([
    [0, 'preoccupant'],
    [29, 'preoccupant'],
    [30, 'melancolique'],
    [49, 'melancolique'],
    [50, 'neutre'],
    [69, 'neutre'],
    [70, 'enjoue'],
    [100, 'enjoue'],
  ])('%i → %s', (score, tier) => expect(moodTier(score)).toBe(tier));
});

// A session as the guard sees it: what the senior said (ASR: lowercase, little punctuation) and the companion's replies.
const session: Exchange[] = [
  { transcript: 'Bonjour ça va', replyText: 'Bonjour Marie, je suis content de vous entendre.' },
  exchange,
  { transcript: "ma fille Claire habite à Lyon et elle vient le 14 juillet, je dois aller à l'hôpital mardi", replyText: 'Claire vous rend souvent visite ? Lyon n’est pas si loin.' },
  { transcript: 'Je suis très fatiguée. Il a plu toute la nuit sur les toits du village.', replyText: 'Reposez-vous bien, Marie.' },
];
const guard = verbatimGuard(verbatimSourcesOf(session));

describe('the verbatim guard', () => {
  it('exports its thresholds', () => {
    expect([VERBATIM_RUN_WORDS, VERBATIM_UTTERANCE_WORDS, VERBATIM_QUOTE_WORDS]).toEqual([5, 3, 2]);
  });

  it('lets friendly paraphrases through, names, places and dates included', () => {
    for (const text of [
      'Sa fille Claire vit à Lyon et lui rendra visite le 14 juillet.',
      'Le senior a évoqué une sortie au marché avec sa voisine Josiane, et des fraises achetées ensemble.',
      'Elle a salué son compagnon et semblait de bonne humeur.',
      "Elle a un rendez-vous à l'hôpital mardi et se sent épuisée après une nuit de pluie.",
      'Il a évoqué le « tricot » et la chorale.',
      'Le senior a parlé de trois sujets : sa fille, le marché et la pluie.',
      'Claire, Lyon, le 14 juillet.',
    ]) {
      expect([text, guard(text)]).toEqual([text, null]);
    }
  });

  describe('rule `utterance`: a whole senior utterance of 3 words or more', () => {
    it('refuses a 3-word utterance inside a longer summary, quoted or not', () => {
      expect(guard('Le senior a ouvert la conversation par bonjour ça va, puis a parlé de sa fille.')).toBe('utterance');
      expect(echoesTranscriptVerbatim('Il a commencé par « Bonjour ça va » avant de parler du marché.', verbatimSourcesOf(session))).toBe('quote');
    });

    it('counts each sentence of a turn as an utterance', () => {
      expect(guard('Elle a confié : je suis très fatiguée.')).toBe('quote');
      expect(guard('Elle a confié je suis très fatiguée, après une nuit agitée.')).toBe('utterance');
    });

    it('ignores utterances shorter than 3 words and fragments of longer ones', () => {
      const sources = verbatimSourcesOf([{ transcript: 'oui merci', replyText: 'Avec plaisir.' }, exchange]);
      expect(echoesTranscriptVerbatim('Le senior a répondu oui merci poliment.', sources)).toBeNull();
      expect(echoesTranscriptVerbatim('Une sortie au marché avec une voisine.', sources)).toBeNull();
    });

    it('ignores an utterance made only of a date, a name or function words', () => {
      const sources = verbatimSourcesOf([{ transcript: 'le 14 juillet', replyText: 'Une belle date.' }, { transcript: 'avec Claire et Paul', replyText: 'Très bien.' }]);
      expect(echoesTranscriptVerbatim('Elle attend le 14 juillet avec Claire et Paul.', sources)).toBeNull();
    });
  });

  describe('rule `run`: 5 consecutive words of the session', () => {
    it('refuses a 5-word clause of the senior copied inside a paraphrase, not a 4-word one', () => {
      expect(guard('Le senior a raconté que sa fille Claire habite à Lyon, ce qui le rassure.')).toBe('run');
      expect(guard('Le senior a raconté que Claire habite à Lyon, ce qui le rassure.')).toBeNull();
    });

    it('refuses a run copied from the companion’s reply too', () => {
      expect(guard('Le compagnon a répété je suis content de vous entendre.')).toBe('run');
    });

    it('subsumes the seed’s copy guard: a fact of 50 characters found literally in the transcript', () => {
      const copied = 'je suis allée au marché avec ma voisine Josiane et';
      expect(copied.length).toBeGreaterThanOrEqual(50);
      expect(guard(copied)).toBe('run');
    });

    it('does not join two utterances into one run', () => {
      const sources = verbatimSourcesOf([
        { transcript: 'je prépare une tarte', replyText: 'Miam.' },
        { transcript: 'aux pommes du verger', replyText: 'Délicieux.' },
      ]);
      expect(echoesTranscriptVerbatim('Une tarte aux pommes du jardin, dit-on.', sources)).toBeNull();
    });

    it('ignores a run made only of proper names, numbers, dates and function words', () => {
      const sources = verbatimSourcesOf([{ transcript: 'Nous irons avec Claire et Paul à Lyon le 14 juillet', replyText: 'Quelle joie.' }]);
      expect(echoesTranscriptVerbatim('Elle verra Claire et Paul à Lyon le 14 juillet.', sources)).toBeNull();
      expect(echoesTranscriptVerbatim('Bientôt, nous irons avec Claire et Paul.', sources)).toBe('run');
    });

    it('knows the senior’s names even where the transcript did not capitalize them', () => {
      const said = [{ transcript: 'ma sœur et moi marie dupont et jeanne dupont', replyText: 'Deux sœurs !' }];
      const text = 'Les sœurs Marie Dupont et Jeanne Dupont.';
      expect(echoesTranscriptVerbatim(text, verbatimSourcesOf(said))).toBe('run');
      expect(echoesTranscriptVerbatim(text, { ...verbatimSourcesOf(said), names: ['Marie Dupont', 'Jeanne Dupont'] })).toBeNull();
    });

    it('takes names from the conversation only: a derived text cannot capitalize its way through', () => {
      expect(guard('Le Senior A Dit Bonjour Ça Va.')).toBe('utterance');
      expect(guard('Sa Fille Claire Habite À Lyon.')).toBe('run');
    });
  });

  describe('normalization: case, accents, punctuation and apostrophes aside', () => {
    it('matches whatever the case, the accents and the punctuation', () => {
      expect(guard('MA FILLE CLAIRE HABITE À LYON')).toBe('run');
      expect(guard('ma fille claire habite a lyon')).toBe('run');
      expect(guard('Ma… fille, Claire ; habite — à Lyon !')).toBe('run');
    });

    it('treats apostrophes as separators, typographic or not', () => {
      expect(verbatimWords("l'hôpital")).toEqual(['l', 'hopital']);
      expect(verbatimWords('l’Hôpital')).toEqual(verbatimWords('l hopital'));
      expect(guard('Elle doit aller à l’hôpital mardi prochain.')).toBe('run');
      expect(guard('Elle doit aller a l hopital mardi prochain.')).toBe('run');
    });

    it('sees through full-width letters, zero-width spaces and ligatures', () => {
      expect(verbatimWords('Ｂｏｎｊｏｕｒ')).toEqual(['bonjour']);
      expect(guard('Le senior a ouvert par bon\u200Bjour ça\u00A0va.')).toBe('utterance');
      expect(verbatimWords('cœur')).toEqual(verbatimWords('coeur'));
    });
  });

  describe('rule `quote`: quoted speech', () => {
    it('refuses « La personne a dit : « Bonjour … » »', () => {
      expect(guard('La personne a dit : « Bonjour … »')).toBe('quote');
      expect(echoesTranscriptVerbatim('La personne a dit : « Bonjour … »', { utterances: [], texts: [] })).toBe('quote');
    });

    it('refuses 2 quoted words or more in any quotation marks, even unclosed, whatever they quote', () => {
      for (const text of [
        'Le senior parle de « sa fille » souvent.',
        'Le senior parle de “sa fille” souvent.',
        'Le senior parle de "sa fille" souvent.',
        'Le senior parle de ‹ sa fille › souvent.',
        'Le senior parle de „sa fille“ souvent.',
        'Le senior parle de »sa fille« souvent.',
        'Le senior a lancé « une phrase que personne ne connaît',
      ]) {
        expect([text, guard(text)]).toEqual([text, 'quote']);
      }
    });

    it('lets one quoted word through, elided or hyphenated', () => {
      expect(guard('Il a parlé de « l’hôpital » et du « rendez-vous ».')).toBeNull();
    });

    it('refuses a speech-reporting colon or a quoting phrase, quotation marks or not', () => {
      for (const text of [
        'Elle a dit : elle se porte bien.',
        'Il a déclaré : tout va bien.',
        'Le compagnon répond : parfait.',
        'Elle lui a répondu : volontiers.',
        "Elle s'est exclamée : quelle surprise.",
        'Elle a dit à Claire : viens dimanche.',
        'Elle se porte bien, je cite, depuis dimanche.',
        'Elle a repris mot pour mot une vieille chanson.',
      ]) {
        expect([text, guard(text)]).toEqual([text, 'quote']);
      }
      expect(guard('Le senior a évoqué une discussion : la chorale.')).toBeNull();
    });
  });

  it('compiles once for many texts: the same answers as the one-shot form', () => {
    const texts = ['Sa fille Claire vit à Lyon.', 'Bonjour ça va', 'Elle a dit : oui.'];
    expect(texts.map(guard)).toEqual(texts.map((t) => echoesTranscriptVerbatim(t, verbatimSourcesOf(session))));
  });
});

describe('MistralSmallMoodClassifier', () => {
  it('returns the model’s score, retrying once after a 503', async () => {
    const model = scriptedModel({ status: 503 }, { json: { score: 72 } });
    expect(await new MistralSmallMoodClassifier(model).classify(exchange)).toBe(72);
    expect(model.doGenerateCalls).toHaveLength(2);
  });

  it('throws when no score can be had (the row is then not written)', async () => {
    await expect(new MistralSmallMoodClassifier(scriptedModel({ json: { score: 140 } })).classify(exchange)).rejects.toThrow();
  });
});

describe('MistralSmallConversationSummarizer', () => {
  const summarize = (model: ReturnType<typeof scriptedModel>) => new MistralSmallConversationSummarizer(model, logger).summarize(exchange);

  it('returns a third-person summary', async () => {
    expect(await summarize(scriptedModel({ json: { summary: 'Le senior a évoqué une sortie au marché avec une voisine.' } }))).toBe(
      'Le senior a évoqué une sortie au marché avec une voisine.',
    );
  });

  it('drops an output that re-includes the exchange verbatim', async () => {
    expect(await summarize(scriptedModel({ json: { summary: `Elle a dit : ${exchange.transcript}.` } }))).toBeNull();
  });

  it('drops a short quotation of the senior (issue 10: « La personne a dit : « Bonjour … » »), logging the rule and no text', async () => {
    const before = logs.lines.length;
    expect(await summarize(scriptedModel({ json: { summary: 'La personne a dit : « Bonjour … »' } }))).toBeNull();
    expect(await summarize(scriptedModel({ json: { summary: 'Le senior est allé « au marché » ce matin.' } }))).toBeNull();
    const warns = logs.lines.slice(before).join('');
    expect(warns).toContain('"rule":"quote"');
    expect(warns).not.toContain('Bonjour');
    expect(warns).not.toContain('marché');
  });

  it('drops an output that echoes another exchange of the same session', async () => {
    const earlier = { transcript: 'mon petit-fils Théo passe son permis de conduire la semaine prochaine à Nantes', replyText: 'Formidable !' };
    const model = scriptedModel({ json: { summary: 'Le senior a dit que mon petit-fils Théo passe son permis de conduire la semaine prochaine.' } });
    expect(await new MistralSmallConversationSummarizer(model, logger).summarize(exchange, [earlier, exchange])).toBeNull();
  });

  it('null for an empty output', async () => {
    expect(await summarize(scriptedModel({ json: { summary: '  ' } }))).toBeNull();
    expect(await summarize(scriptedModel({ json: { summary: null } }))).toBeNull();
  });

  it('retries once on a 503, gives up (null) after two', async () => {
    const once = scriptedModel({ status: 503 }, { json: { summary: 'Le senior a parlé de fraises.' } });
    expect(await summarize(once)).toBe('Le senior a parlé de fraises.');
    expect(once.doGenerateCalls).toHaveLength(2);
    const twice = scriptedModel({ status: 503 }, { status: 503 }, { json: { summary: 'jamais' } });
    expect(await summarize(twice)).toBeNull();
    expect(twice.doGenerateCalls).toHaveLength(2);
  });

  it('never retries a schema mismatch', async () => {
    const model = scriptedModel({ text: 'pas du JSON' }, { json: { summary: 'jamais' } });
    expect(await summarize(model)).toBeNull();
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('cuts an attempt at 4000 ms and never retries a timeout', async () => {
    vi.useFakeTimers();
    const model = scriptedModel('hang', { json: { summary: 'jamais' } });
    const pending = summarize(model);
    await vi.advanceTimersByTimeAsync(3999);
    expect(model.doGenerateCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await pending).toBeNull();
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

describe('MistralSmallMemoryExtractor', () => {
  const extract = (model: ReturnType<typeof scriptedModel>) => new MistralSmallMemoryExtractor(model, logger).extract([exchange]);

  it('keeps valid facts and tolerates extra fields', async () => {
    expect(await extract(scriptedModel({ json: { facts: [{ ...good, source: 'turn 1' }], model_notes: 'x' } }))).toEqual([good]);
  });

  it('drops a fact with an invented category, alone', async () => {
    const facts = await extract(scriptedModel({ json: { facts: [good, { ...good, category: 'religion' }] } }));
    expect(facts).toEqual([good]);
  });

  it('drops facts under 0.6 confidence', async () => {
    expect(await extract(scriptedModel({ json: { facts: [good, { ...good, confidence: 0.59 }] } }))).toEqual([good]);
  });

  it('drops each quoting fact alone, keeps the others, and logs the rule without the text', async () => {
    const before = logs.lines.length;
    const copied = [
      'je suis allée au marché avec ma voisine Josiane et nous avons',
      'Elle dit : « nous avons acheté des fraises ».',
      'Elle achète des fraises, les fraises sont délicieuses en cette saison.',
    ].map((content) => ({ ...good, content }));
    const alsoGood = { content: 'Elle apprécie les fruits de saison.', category: 'profil', confidence: 0.8 };
    expect(await extract(scriptedModel({ json: { facts: [copied[0], good, copied[1], alsoGood, copied[2]] } }))).toEqual([good, alsoGood]);
    const warns = logs.lines.slice(before).join('');
    expect(warns.match(/extracted fact dropped: it repeated the conversation verbatim/g)).toHaveLength(3);
    expect(warns).toContain('"rule":"run"');
    expect(warns).toContain('"rule":"quote"');
    expect(warns).not.toContain('fraises');
  });

  it('drops a malformed entry among good ones with a warn log that quotes nothing', async () => {
    const before = logs.lines.length;
    const facts = await extract(scriptedModel({ json: { facts: ['texte libre', { content: 42 }, good, null] } }));
    expect(facts).toEqual([good]);
    const warns = logs.lines.slice(before).join('');
    expect(warns).toContain('malformed');
    expect(warns).not.toContain('texte libre');
  });

  it('retries once on a 503; two 503s give no facts', async () => {
    const once = scriptedModel({ status: 503 }, { json: { facts: [good] } });
    expect(await extract(once)).toEqual([good]);
    expect(once.doGenerateCalls).toHaveLength(2);
    const twice = scriptedModel({ status: 503 }, { status: 503 }, { json: { facts: [good] } });
    expect(await extract(twice)).toEqual([]);
    expect(twice.doGenerateCalls).toHaveLength(2);
  });

  it('never retries a schema mismatch (no facts array)', async () => {
    const model = scriptedModel({ json: { items: [good] } }, { json: { facts: [good] } });
    expect(await extract(model)).toEqual([]);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('cuts an attempt at 5000 ms and never retries a timeout', async () => {
    vi.useFakeTimers();
    const model = scriptedModel('hang', { json: { facts: [good] } });
    const pending = extract(model);
    await vi.advanceTimersByTimeAsync(4999);
    expect(model.doGenerateCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await pending).toEqual([]);
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

describe('MistralSmallSegmentSummarizer', () => {
  it('drops a summary with a clause copied from any exchange of the session', async () => {
    const model = scriptedModel({ json: { summary: 'Le senior a parlé de sa journée ; il a plu toute la nuit sur les toits, dit-il.' } });
    expect(await new MistralSmallSegmentSummarizer(model, logger).summarize(session)).toBeNull();
    const paraphrase = scriptedModel({ json: { summary: 'Le senior a parlé du marché, de sa fille Claire à Lyon et de sa fatigue après une nuit pluvieuse.' } });
    expect(await new MistralSmallSegmentSummarizer(paraphrase, logger).summarize(session)).toContain('Claire à Lyon');
  });
});

describe('MistralSmallWindowSummarizer', () => {
  const messages = session.flatMap((e) => [
    { role: 'user' as const, content: e.transcript },
    { role: 'assistant' as const, content: e.replyText },
  ]);
  const fold = (summary: string) => new MistralSmallWindowSummarizer(scriptedModel({ json: { summary } })).summarize({ previousSummary: 'Marie a salué son compagnon.', messages });

  it('keeps a paraphrase', async () => {
    expect(await fold('Marie a salué son compagnon, parlé de sa fille Claire qui vit à Lyon et de sa fatigue.')).toBe(
      'Marie a salué son compagnon, parlé de sa fille Claire qui vit à Lyon et de sa fatigue.',
    );
  });

  it('falls back to the previous summary, as on a failure, when the new one quotes a folded message', async () => {
    expect(await fold('Marie a dit : « Bonjour ça va ».')).toBe('Marie a salué son compagnon.');
    expect(await fold('Marie a raconté que sa fille Claire habite à Lyon.')).toBe('Marie a salué son compagnon.');
    expect(await fold('Le compagnon lui a conseillé : reposez-vous bien.')).toBe('Marie a salué son compagnon.');
  });
});

describe('MistralSmallConsolidator (the dream)', () => {
  const inputs = {
    notes: ['Le senior a raconté que son accordéon vert dort au grenier depuis l’hiver.'],
    segments: ['Elle a parlé de sa fille Claire et de la chorale du jeudi.'],
    facts: ['Sa fille Claire vit à Lyon'],
    interlocutor: {},
    compass: {},
  };
  const proposal: Consolidation = {
    patterns: [
      { pattern: 'Elle joue volontiers de la musique', category: 'profil' },
      { pattern: 'Son accordéon vert dort au grenier', category: 'profil' },
      { pattern: 'Sa fille Claire vit à Lyon', category: 'contacts' },
    ],
    hypotheses: ['Elle regrette peut-être la musique.', 'Elle a dit : « je m’ennuie »'],
    continuity: ['La chorale reprend jeudi.'],
    nextSession: { resumeWith: '« son accordéon vert »', questionsToAsk: ['Joue-t-elle encore ?'], avoid: ['de la chorale du jeudi, selon ses propres mots'] },
    compass: { uncertainties: [], tone: 'doux', topicsToExplore: ['la musique', 'parlé de sa fille Claire et de la chorale'] },
    interlocutor: { role: 'musicienne amatrice', interests: ['accordéon'], recurringTopics: ['sa fille Claire'], patterns: [] },
  };

  it('drops each output that quotes or copies its inputs, keeps the rest', async () => {
    const kept = await new MistralSmallConsolidator(scriptedModel({ json: proposal })).propose(inputs);
    expect(kept).toEqual({
      ...proposal,
      patterns: [proposal.patterns[0]],
      hypotheses: ['Elle regrette peut-être la musique.'],
      nextSession: { resumeWith: null, questionsToAsk: ['Joue-t-elle encore ?'], avoid: [] },
      compass: { ...proposal.compass, topicsToExplore: ['la musique'] },
    });
  });
});

describe('the sub-agents’ instructions', () => {
  it('every sub-agent that writes text is told to reformulate, quote nothing and copy at most four words, and is shown no quotation marks', async () => {
    const summary = () => scriptedModel({ json: { summary: null } });
    const calls = [
      async (m: ReturnType<typeof scriptedModel>) => new MistralSmallConversationSummarizer(m, logger).summarize(exchange),
      async (m: ReturnType<typeof scriptedModel>) => new MistralSmallSegmentSummarizer(m, logger).summarize([exchange]),
      async (m: ReturnType<typeof scriptedModel>) => new MistralSmallWindowSummarizer(m).summarize({ previousSummary: null, messages: [{ role: 'user', content: exchange.transcript }] }),
    ];
    const models = [summary(), summary(), summary(), scriptedModel({ json: { facts: [] } }), scriptedModel({ json: { ...neutralProposal } })];
    await Promise.all(calls.map((call, i) => call(models[i]!)));
    await new MistralSmallMemoryExtractor(models[3]!, logger).extract([exchange]);
    await new MistralSmallConsolidator(models[4]!).propose({ notes: ['Le senior a parlé du marché.'], segments: [], facts: [], interlocutor: {}, compass: {} });
    for (const model of models) {
      const [system, user] = model.doGenerateCalls[0]!.prompt;
      expect(system).toMatchObject({ role: 'system', content: expect.stringContaining('ne reprends jamais plus de quatre mots consécutifs') });
      expect(system!.content).toContain("N'emploie aucun guillemet");
      expect(system!.content).toContain('troisième personne');
      expect(JSON.stringify(user)).not.toMatch(/[«»“”]/u);
    }
  });
});

const neutralProposal: Consolidation = {
  patterns: [],
  hypotheses: [],
  continuity: [],
  nextSession: { resumeWith: null, questionsToAsk: [], avoid: [] },
  compass: { uncertainties: [], tone: null, topicsToExplore: [] },
  interlocutor: { role: null, interests: [], recurringTopics: [], patterns: [] },
};

describe('offline sub-agents', () => {
  it('the offline model derives a neutral score, no summary and no facts', async () => {
    const offline = new OfflineLanguageModel();
    expect(await new MistralSmallMoodClassifier(offline).classify(exchange)).toBe(50);
    expect(await new MistralSmallConversationSummarizer(offline, logger).summarize(exchange)).toBeNull();
    expect(await new MistralSmallMemoryExtractor(offline, logger).extract([exchange])).toEqual([]);
  });

  it('neutralValue picks null, [], and the middle of a range', () => {
    expect(neutralValue({ type: 'object', properties: { a: { type: ['string', 'null'] }, b: { type: 'array' }, c: { type: 'integer', minimum: 0, maximum: 100 } } })).toEqual({
      a: null,
      b: [],
      c: 50,
    });
  });
});

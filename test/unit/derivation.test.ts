import { afterEach, describe, expect, it, vi } from 'vitest';
import { neutralValue, OfflineLanguageModel } from '../../adapters/models/offline-language-model.ts';
import { MistralSmallConversationSummarizer } from '../../adapters/subagents/mistral-small-conversation-summarizer.ts';
import { MistralSmallMemoryExtractor } from '../../adapters/subagents/mistral-small-memory-extractor.ts';
import { MistralSmallMoodClassifier } from '../../adapters/subagents/mistral-small-mood-classifier.ts';
import { echoesTranscriptVerbatim, isCopiedFact, moodTier } from '../../machines/derivation.ts';
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

describe('verbatim guards', () => {
  it('echoesTranscriptVerbatim: a run of 8 consecutive words of the input, case and punctuation aside', () => {
    expect(echoesTranscriptVerbatim('Elle a dit : « je suis allée au marché avec ma voisine Josiane ».', [exchange.transcript])).toBe(true);
    expect(echoesTranscriptVerbatim('Le senior a évoqué une sortie au marché avec sa voisine.', [exchange.transcript])).toBe(false);
  });

  it('isCopiedFact: only facts of 50 characters or more found literally in the transcript', () => {
    expect(isCopiedFact('je suis allée au marché avec ma voisine Josiane et', exchange.transcript)).toBe(true);
    expect(isCopiedFact('ma voisine Josiane', exchange.transcript)).toBe(false);
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

  it('drops a fact copied from the transcript', async () => {
    const copied = { ...good, content: 'je suis allée au marché avec ma voisine Josiane et nous avons' };
    expect(await extract(scriptedModel({ json: { facts: [copied, good] } }))).toEqual([good]);
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

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { calibrate, readCalibrations, thresholdFor, writeCalibration } from '../../adapters/semantic-cache-calibration.ts';
import { SemanticCache, type SemanticCacheOptions } from '../../adapters/semantic-cache.ts';
import type { MemoryEmbedderPort } from '../../machines/memory.port.ts';
import { detailsAgree, isFollowUp, questionDetails } from '../../machines/question-details.ts';
import { readPairs } from '../../runtime/cache-calibrate-cli.ts';
import { topicEmbedder } from '../support/embeddings.ts';

const signal = new AbortController().signal;
const marie = 'senior-marie';
const paul = 'senior-paul';

function cache(options: Partial<SemanticCacheOptions> = {}) {
  let now = 1_000_000;
  const c = new SemanticCache({
    threshold: 0.78,
    embedder: new LocalHashEmbedder(),
    agentModelId: 'agent-1',
    ttlMs: 60_000,
    maxPerSenior: 50,
    maxEntries: 1000,
    maxCandidates: 64,
    budgetMs: 1000,
    now: () => now,
    ...options,
  });
  return Object.assign(c, { advance: (ms: number) => (now += ms) });
}

/** A lookup that misses, then the reply stored under its ticket. */
async function seed(c: SemanticCache, seniorId: string, question: string, reply: string, previous: { question: string; reply: string } | null = null) {
  const miss = await c.lookup({ seniorId, question, previous, promptVersion: 'p1' }, signal);
  expect(miss.kind).toBe('miss');
  c.store((miss as { ticket: unknown }).ticket, reply);
}
const ask = (c: SemanticCache, seniorId: string, question: string, previous: { question: string; reply: string } | null = null, promptVersion = 'p1') =>
  c.lookup({ seniorId, question, previous, promptVersion }, signal);

describe('near-miss guard', () => {
  it.each([
    ['Quel temps fera-t-il demain ?', 'Quel temps fera-t-il samedi ?', 'day'],
    ['Est-ce que ma fille passe ?', 'Est-ce que mon fils passe ?', 'person'],
    ["J'ai pris mes médicaments ?", "Je n'ai pas pris mes médicaments ?", 'negation'],
    ['Le rendez-vous est à 10h ?', 'Le rendez-vous est à 11h ?', 'time'],
    ['Tu connais Claire ?', 'Tu connais Sophie ?', 'name'],
    ['La pharmacie est ouverte ?', 'La boulangerie est ouverte ?', 'place'],
    ["J'ai 3 petits-enfants ?", "J'ai 4 petits-enfants ?", 'number'],
    ['Le marché, c’est en mars ?', 'Le marché, c’est en avril ?', 'month'],
  ])('%s ≠ %s (%s)', (a, b) => expect(detailsAgree(questionDetails(a), questionDetails(b))).toBe(false));

  it('lets paraphrases with the same details through', () => {
    expect(detailsAgree(questionDetails('Quel temps fera-t-il demain ?'), questionDetails('Demain, il fera quel temps ?'))).toBe(true);
    expect(detailsAgree(questionDetails('Ma voisine Josiane est rentrée ?'), questionDetails('Josiane, ma voisine, est rentrée ?'))).toBe(true);
  });

  it('tells follow-ups from standalone questions (the impersonal « il » is not one)', () => {
    expect(isFollowUp('Et elle, quel âge a-t-elle ?')).toBe(true);
    expect(isFollowUp('Tu lui as parlé ?')).toBe(true);
    expect(isFollowUp('Quel temps fait-il ?')).toBe(false);
    expect(isFollowUp('Il y a du soleil ?')).toBe(false);
  });
});

describe('SemanticCache', () => {
  it('hits at or above the threshold with the stored reply; misses below it', async () => {
    const embedder = topicEmbedder({ 'q': { 0: 1 }, 'same meaning': { 0: 0.8, 1: 0.6 }, 'other meaning': { 0: 0.7, 1: 0.714 } });
    const c = cache({ embedder, threshold: 0.8 });
    await seed(c, marie, 'q', 'la réponse');
    expect(await ask(c, marie, 'same meaning')).toEqual({ kind: 'hit', reply: 'la réponse' });
    expect((await ask(c, marie, 'other meaning')).kind).toBe('miss');
  });

  it('never shares an entry between seniors, embedding models, agent models or prompt versions', async () => {
    const c = cache();
    await seed(c, marie, 'Comment ça va ?', 'Très bien, merci.');
    expect((await ask(c, marie, 'Comment ça va ?')).kind).toBe('hit');
    expect((await ask(c, paul, 'Comment ça va ?')).kind).toBe('miss');
    const other: MemoryEmbedderPort = { modelId: 'another-model', embed: (t) => new LocalHashEmbedder().embed(t) };
    const shared = { maxEntries: 1000 };
    for (const variant of [{ embedder: other }, { agentModelId: 'agent-2' }]) {
      const c2 = cache({ ...shared, ...variant });
      expect((await ask(c2, marie, 'Comment ça va ?')).kind).toBe('miss');
    }
    // Another persona, another prompt version: a different scope in the same cache.
    expect((await ask(c, marie, 'Comment ça va ?', null, 'p2')).kind).toBe('miss');
  });

  it('refuses a near-miss: similar question, different detail', async () => {
    const c = cache();
    await seed(c, marie, 'Quel temps fera-t-il demain ?', 'Il fera beau demain.');
    expect((await ask(c, marie, 'Quel temps fera-t-il samedi ?')).kind).toBe('miss');
    expect((await ask(c, marie, 'Quel temps fera-t-il demain ?')).kind).toBe('hit');
  });

  it('keys a follow-up by the exchange it follows', async () => {
    const c = cache();
    const claire = { question: 'Ma fille Claire a quel âge ?', reply: 'Claire a 52 ans.' };
    const luc = { question: 'Mon fils Luc a quel âge ?', reply: 'Luc a 48 ans.' };
    await seed(c, marie, 'Et elle, elle habite où ?', 'Claire habite à Lyon.', claire);
    expect(await ask(c, marie, 'Et elle, elle habite où ?', claire)).toEqual({ kind: 'hit', reply: 'Claire habite à Lyon.' });
    expect((await ask(c, marie, 'Et elle, elle habite où ?', luc)).kind).toBe('miss');
    expect((await ask(c, marie, 'Et elle, elle habite où ?', null)).kind).toBe('bypass');
  });

  it('forgets entries past their TTL', async () => {
    const c = cache({ ttlMs: 1000 });
    await seed(c, marie, 'Comment ça va ?', 'Bien.');
    c.advance(999);
    expect((await ask(c, marie, 'Comment ça va ?')).kind).toBe('hit');
    c.advance(2);
    expect((await ask(c, marie, 'Comment ça va ?')).kind).toBe('miss');
    expect(c.size).toBe(0);
  });

  it('evicts the least recently used entry past its bounds, per senior and in total', async () => {
    const c = cache({ maxPerSenior: 2, maxEntries: 3 });
    await seed(c, marie, 'Tu connais une blague ?', 'b1');
    await seed(c, marie, 'Tu aimes la musique ?', 'b2');
    expect((await ask(c, marie, 'Tu connais une blague ?')).kind).toBe('hit'); // now the most recently used
    await seed(c, marie, 'Quelle tisane aide à dormir ?', 'b3'); // evicts « musique »
    expect((await ask(c, marie, 'Tu aimes la musique ?')).kind).toBe('miss');
    expect((await ask(c, marie, 'Tu connais une blague ?')).kind).toBe('hit');
    await seed(c, paul, 'Comment ça va ?', 'p1');
    await seed(c, paul, 'Tu peux répéter ?', 'p2'); // a fourth entry in all: the global LRU goes
    expect(c.size).toBe(3);
  });

  it('drops a senior’s entries on invalidation, others’ kept', async () => {
    const c = cache();
    await seed(c, marie, 'Comment ça va ?', 'Bien.');
    await seed(c, paul, 'Comment ça va ?', 'Bien aussi.');
    expect(c.invalidateSenior(marie)).toBe(1);
    expect((await ask(c, marie, 'Comment ça va ?')).kind).toBe('miss');
    expect((await ask(c, paul, 'Comment ça va ?')).kind).toBe('hit');
  });

  it('is off without a threshold, and bypasses an embedder that fails or is too slow', async () => {
    expect((await ask(cache({ threshold: null }), marie, 'Comment ça va ?')).kind).toBe('bypass');
    expect((await ask(cache({ embedder: { modelId: 'x', embed: () => Promise.reject(new Error('down')) } }), marie, 'q')).kind).toBe('bypass');
    expect((await ask(cache({ embedder: { modelId: 'x', embed: () => new Promise(() => {}) }, budgetMs: 5 }), marie, 'q')).kind).toBe('bypass');
  });

  it('never stores an empty reply', async () => {
    const c = cache();
    const miss = await ask(c, marie, 'Comment ça va ?');
    c.store((miss as { ticket: unknown }).ticket, '   ');
    expect(c.size).toBe(0);
  });
});

describe('calibration', () => {
  const pairs = [
    { a: 'q1', b: 'p1', same: true },
    { a: 'q2', b: 'p2', same: true },
    { a: 'q3', b: 'p3', same: true },
    { a: 'q4', b: 'u4', same: false },
    { a: 'Il fera beau demain ?', b: 'Il fera beau samedi ?', same: false },
  ];

  it('picks, per profile, the lowest threshold reaching its precision, measuring threshold and guard together', () => {
    const same = [0.95, 0.94, 0.93, 0.92, 0.91, 0.9, 0.89, 0.88, 0.7];
    const labelled = [
      ...same.map((_, i) => ({ a: `question ${i}`, b: `paraphrase ${i}`, same: true })),
      { a: 'une question', b: 'une autre question', same: false },
      // A near-miss above every threshold: the guard stops it, so it never costs precision.
      { a: 'Il fera beau demain ?', b: 'Il fera beau samedi ?', same: false },
    ];
    const result = calibrate(labelled, [...same, 0.8, 0.99]);
    expect(result.strict).toEqual({ threshold: 0.88, precision: 1, hitRate: 8 / 9 });
    expect(result.permissive).toEqual({ threshold: 0.88, precision: 1, hitRate: 8 / 9 });
    expect(result.aggressive).toEqual({ threshold: 0.7, precision: 0.9, hitRate: 1 });
  });

  it('writes the thresholds for the model, and a model without calibration runs with the cache off', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'calibration-')), 'c.json');
    writeCalibration('model-a', { ...calibrate(pairs, [0.95, 0.9, 0.7, 0.85, 0.99]), calibratedAt: '2026-11-30T00:00:00Z' }, file);
    const all = readCalibrations(file);
    expect(thresholdFor('strict', 'model-a', all).threshold).toBe(0.9);
    expect(thresholdFor('aggressive', 'model-a', all).threshold).toBe(0.9);
    expect(thresholdFor('strict', 'model-b', all)).toEqual({ threshold: null, reason: expect.stringContaining('no calibration') });
    expect(thresholdFor('off', 'model-a', all).threshold).toBeNull();
  });

  it('the shipped pairs file: ≥ 300 labelled pairs, at least a third near-misses', () => {
    const shipped = readPairs('calibration/pairs.fr.jsonl');
    expect(shipped.length).toBeGreaterThanOrEqual(300);
    const nearMisses = shipped.filter((p) => !p.same && !detailsAgree(questionDetails(p.a), questionDetails(p.b)));
    expect(nearMisses.length).toBeGreaterThanOrEqual(shipped.length / 3);
    expect(thresholdFor('strict', new LocalHashEmbedder().modelId, readCalibrations()).threshold).toBeGreaterThan(0.5);
  });

  it('refuses a malformed pairs file with the line number', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'pairs-')), 'p.jsonl');
    await writeFile(file, '{"a":"x","b":"y","same":true}\n{"a":"x","same":"yes"}\n');
    expect(() => readPairs(file)).toThrow(/p\.jsonl:2/);
  });
});

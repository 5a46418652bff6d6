import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import { calibrate, isHeldOut, measureStrict, PROFILE_PRECISION, readCalibrations, readStrictFigures, settingFor, splitPairs, writeCalibration, type LabelledPair } from '../../adapters/semantic-cache/semantic-cache-calibration.ts';
import { SemanticCache, type SemanticCacheOptions } from '../../adapters/semantic-cache/semantic-cache.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { guardsAgree, questionGuard } from '../../machines/cache/near-miss-guard.ts';
import { detailsAgree, isFollowUp, questionDetails } from '../../machines/cache/question-details.ts';
import { readPairs } from '../../runtime/cli/cache-calibrate.ts';
import { topicEmbedder } from '../support/embeddings.ts';

const signal = new AbortController().signal;
const marie = 'senior-marie';
const paul = 'senior-paul';

function cache(options: Partial<SemanticCacheOptions> = {}) {
  let now = 1_000_000;
  const c = new SemanticCache({
    strict: false,
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
    ['La pharmacie est ouverte ?', 'La boulangerie est ouverte ?', 'place'],
    ["J'ai 3 petits-enfants ?", "J'ai 4 petits-enfants ?", 'number'],
    ['Le marché, c’est en mars ?', 'Le marché, c’est en avril ?', 'month'],
  ])('%s ≠ %s (%s)', (a, b) => expect(detailsAgree(questionDetails(a), questionDetails(b))).toBe(false));

  it('names are content words: the whole guard refuses « Claire » for « Sophie »', () => {
    expect(guardsAgree(questionGuard('Tu connais Claire ?'), questionGuard('Tu connais Sophie ?'))).toBe(false);
    expect(guardsAgree(questionGuard('Tu connais Claire ?'), questionGuard('Claire, tu la connais ?'))).toBe(true);
  });

  it('« un », « une » are articles and « après-midi » is no « midi »', () => {
    expect(detailsAgree(questionDetails('Tu as une recette de crêpes ?'), questionDetails('Tu as la recette des crêpes ?'))).toBe(true);
    expect(questionDetails('Je passe à la pharmacie cet après-midi.').times).toEqual([]);
    expect(questionDetails('On mange à midi ?').times).toEqual(['12:00']);
  });

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
    // Three wordings the guard agrees on; only the similarity decides between them.
    const embedder = topicEmbedder({ 'Tu connais la recette des crêpes ?': { 0: 1 }, 'Raconte-moi la recette des crêpes.': { 0: 0.8, 1: 0.6 }, 'Dis-moi la recette des crêpes.': { 0: 0.7, 1: 0.714 } });
    const c = cache({ embedder, threshold: 0.8 });
    await seed(c, marie, 'Tu connais la recette des crêpes ?', 'la réponse');
    expect(await ask(c, marie, 'Raconte-moi la recette des crêpes.')).toEqual({ kind: 'hit', reply: 'la réponse' });
    expect((await ask(c, marie, 'Dis-moi la recette des crêpes.')).kind).toBe('miss');
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
    await seed(c, marie, 'Tu connais la recette des crêpes ?', 'b1');
    await seed(c, marie, 'Tu aimes la musique ?', 'b2');
    expect((await ask(c, marie, 'Tu connais la recette des crêpes ?')).kind).toBe('hit'); // now the most recently used
    await seed(c, marie, 'Quelle tisane aide à dormir ?', 'b3'); // evicts « musique »
    expect((await ask(c, marie, 'Tu aimes la musique ?')).kind).toBe('miss');
    expect((await ask(c, marie, 'Tu connais la recette des crêpes ?')).kind).toBe('hit');
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

  it('never serves nor stores a question about health, nor a follow-up of one, and counts the refusal', async () => {
    const registry = new Registry();
    const refusals = new Counter({ name: 'refusals', help: 'h', labelNames: ['reason'] as const, registers: [registry] });
    const lookups = new Counter({ name: 'lookups', help: 'h', labelNames: ['outcome'] as const, registers: [registry] });
    const bestSimilarity = new Histogram({ name: 'best', help: 'h', registers: [registry] });
    const c = cache({ metrics: { lookups, refusals, bestSimilarity } });
    const cachet = 'Je peux prendre mon cachet maintenant ?';
    const refused = await ask(c, marie, cachet);
    expect(refused).toEqual({ kind: 'bypass' });
    c.store((refused as { ticket?: unknown }).ticket, 'Oui, prenez-le.');
    expect(c.size).toBe(0);
    expect(await ask(c, marie, 'Et le soir, elle ?', { question: cachet, reply: 'Le matin, oui.' })).toEqual({ kind: 'bypass' });
    // The same frame about something else is cached as before.
    await seed(c, marie, 'Je peux sortir maintenant ?', 'Oui, il fait beau.');
    expect((await ask(c, marie, 'Je peux sortir maintenant ?')).kind).toBe('hit');
    expect((await refusals.get()).values).toEqual([{ labels: { reason: 'health' }, value: 2 }]);
    expect((await lookups.get()).values.find((v) => v.labels.outcome === 'bypass')?.value).toBe(2);
  });

  it('never stores an empty reply', async () => {
    const c = cache();
    const miss = await ask(c, marie, 'Comment ça va ?');
    c.store((miss as { ticket: unknown }).ticket, '   ');
    expect(c.size).toBe(0);
  });
});

describe('calibration', () => {
  /** Pairs named so that the split puts them where the test needs them. */
  function pairsIn(part: 'train' | 'heldOut', count: number, same: boolean, tag: string, wording: 'paraphrase' | 'other' = same ? 'paraphrase' : 'other'): LabelledPair[] {
    const out: LabelledPair[] = [];
    for (let i = 0; out.length < count; i++) {
      const pair = { a: `Tu connais la chanson ${tag} ${i} ?`, b: wording === 'paraphrase' ? `La chanson ${tag} ${i}, tu la connais ?` : `Tu connais la danse ${tag} ${i} ?`, same };
      if (isHeldOut(pair) === (part === 'heldOut')) out.push(pair);
    }
    return out;
  }

  it('splits deterministically, by the pair and not its order, case or punctuation: about 30 % held out, disjoint', () => {
    const pairs = Array.from({ length: 2000 }, (_, i) => ({ a: `Question ${i} ?`, b: `Autre question ${i}`, same: i % 2 === 0 }));
    const { train, heldOut } = splitPairs(pairs);
    expect(train.length + heldOut.length).toBe(2000);
    expect(heldOut.length / 2000).toBeGreaterThan(0.25);
    expect(heldOut.length / 2000).toBeLessThan(0.35);
    expect(heldOut.filter((p) => train.includes(p))).toEqual([]);
    expect(splitPairs(pairs).heldOut).toEqual(heldOut);
    for (const p of heldOut.slice(0, 50)) expect(isHeldOut({ a: p.b.toUpperCase(), b: `${p.a}!!` })).toBe(true);
    for (const p of train.slice(0, 50)) expect(isHeldOut({ a: p.b, b: p.a })).toBe(false);
  });

  it('picks each threshold on the training part only and reports the held-out part', () => {
    const train = [...pairsIn('train', 9, true, 'train'), ...pairsIn('train', 1, false, 'train')];
    const heldOut = [...pairsIn('heldOut', 4, true, 'held'), ...pairsIn('heldOut', 1, false, 'held')];
    const pairs = [...train, ...heldOut];
    // Training paraphrases from 0.95 down to 0.55; the training near-miss is refused by the guard.
    // Held out: paraphrases at 0.5 (below every training pair) and a near-miss the guard refuses.
    const similarity = [...train.map((p, i) => (p.same ? 0.95 - i * 0.05 : 0.99)), ...heldOut.map((p) => (p.same ? 0.5 : 0.99))];
    const result = calibrate(pairs, similarity, { set: 'blind.jsonl', pairs: heldOut, similarity: heldOut.map((p) => (p.same ? 0.5 : 0.99)) });
    expect(result.split).toMatchObject({ train: 10, heldOut: 5 });
    // The lowest training paraphrase sets the threshold: the held-out ones, lower, are not seen by the pick.
    expect(result.permissive.threshold).toBeCloseTo(0.55);
    expect(result.permissive.train).toMatchObject({ pairs: 10, hits: 9, falseHits: 0, precision: 1, hitRate: 1 });
    expect(result.permissive.heldOut).toMatchObject({ pairs: 5, positives: 4, hits: 0, falseHits: 0, hitRate: 0 });
    // No hit measured on the unseen pairs: the profile is not offered.
    expect(result.permissive.unseen).toMatchObject({ pairs: 5, hits: 0 });
    expect(result.permissive.offered).toBe(false);
  });

  it('offers a profile only when its precision on the unseen pairs reaches its promise, whatever the held-out part says; the banner names the set', async () => {
    const train = [...pairsIn('train', 10, true, 't'), ...pairsIn('train', 2, false, 't')];
    const heldOut = pairsIn('heldOut', 10, true, 'h');
    // Pairs written after the rules: one labelled different that the guard cannot tell apart (the same content words), a false hit.
    const unseen = [...pairsIn('heldOut', 10, true, 'u'), ...pairsIn('heldOut', 1, false, 'lookalike', 'paraphrase')];
    const pairs = [...train, ...heldOut];
    const similarityOf = (p: LabelledPair) => (p.same ? 0.9 : 0.95);
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'calibration-')), 'c.json');
    writeCalibration('model-a', { ...calibrate(pairs, pairs.map(similarityOf), { set: 'blind.jsonl', pairs: unseen, similarity: unseen.map(similarityOf) }), calibratedAt: '2026-11-30T00:00:00Z' }, file);
    const all = readCalibrations(file);
    // Held out, perfect; unseen, 10 right of 11 hits: 0.909, below permissive (0.95), enough for aggressive (0.90).
    expect(all['model-a']!.permissive.heldOut.precision).toBe(1);
    expect(all['model-a']!.permissive.unseen.precision).toBeCloseTo(10 / 11);
    expect(all['model-a']!.unseen).toEqual({ set: 'blind.jsonl', pairs: 11 });
    const strict = { ...measureStrict([{ set: 'probes.jsonl', pairs: [{ a: 'Il pleut ?', b: 'Pleut-il ?', same: true }] }]), measuredAt: 'x' };
    // Permissive not offered: strict serves instead, and the banner says both.
    expect(settingFor('permissive', 'model-a', all, strict)).toEqual({
      strict: true,
      threshold: null,
      reason: 'permissive not offered for model-a: precision 0.909, hit rate 1.000 (1.000 outside health, never cached) on 11 pairs written after the rules (blind.jsonl), below its promise 0.95; strict: the same question only, precision 1.000 on the least precise of 1 sets its rules never saw (probes.jsonl; 1 pairs in all)',
    });
    expect(settingFor('aggressive', 'model-a', all, strict)).toMatchObject({ strict: true, threshold: 0.9, reason: 'aggressive: threshold 0.9000, precision 0.909, hit rate 1.000 (1.000 outside health, never cached) on 11 pairs written after the rules (blind.jsonl)' });
    // Strict needs no calibration of the embedder; without its own figures, nothing serves.
    expect(settingFor('strict', 'model-b', all, strict)).toMatchObject({ strict: true, threshold: null });
    expect(settingFor('strict', 'model-b', all, null)).toMatchObject({ strict: false, threshold: null, reason: expect.stringContaining('strict has no figures') });
    // The model check: candidates from the calibrated permissive threshold, or the floor with no calibration.
    expect(settingFor('strict', 'model-a', all, strict, true)).toMatchObject({ strict: true, threshold: all['model-a']!.permissive.threshold });
    expect(settingFor('strict', 'model-b', all, strict, true)).toMatchObject({ strict: true, threshold: 0.3 });
    expect(settingFor('off', 'model-a', all, strict)).toMatchObject({ strict: false, threshold: null });
  });

  it('strict is offered only when every set it is measured on reaches its promise', () => {
    const same = { a: 'Il pleut ?', b: 'Pleut-il ?', same: true };
    const lookalike = { a: 'Il pleut ?', b: 'Pleut-il ?', same: false };
    expect(measureStrict([{ set: 'a', pairs: [same] }]).offered).toBe(true);
    expect(measureStrict([{ set: 'a', pairs: [same] }, { set: 'b', pairs: [same, lookalike] }]).offered).toBe(false);
    // No hit anywhere: no evidence, not offered.
    expect(measureStrict([{ set: 'a', pairs: [{ a: 'Il pleut ?', b: 'Il neige ?', same: false }] }]).offered).toBe(false);
  });

  it('drops an older calibration without held-out figures: that model runs with the cache off', async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'calibration-')), 'c.json');
    await writeFile(file, JSON.stringify({ old: { permissive: { threshold: 0.7, precision: 0.99, hitRate: 0.7 }, pairs: 392, calibratedAt: 'x' } }));
    expect(readCalibrations(file)).toEqual({});
    expect(settingFor('permissive', 'old', readCalibrations(file), null).threshold).toBeNull();
  });

  it('the shipped pairs files and calibration: thresholds picked on ≥ 1,400 pairs, offered on the last blind set’s figures — neither similarity profile is', () => {
    const shipped = readPairs('calibration/pairs.fr.jsonl');
    expect(shipped.length).toBeGreaterThanOrEqual(1400);
    expect(shipped.filter((p) => p.same).length).toBeGreaterThan(shipped.length / 4);
    const calibration = readCalibrations()[new LocalHashEmbedder().modelId]!;
    expect(calibration.pairs).toBe(shipped.length);
    expect(calibration.split.heldOut).toBe(shipped.filter(isHeldOut).length);
    // The unseen pairs: the fifth blind set, written after the rules and evaluated once.
    expect(calibration.unseen).toEqual({ set: 'calibration/pairs-blind-5.fr.jsonl', pairs: readPairs('calibration/pairs-blind-5.fr.jsonl').length });
    for (const profile of ['permissive', 'aggressive'] as const) {
      const p = calibration[profile];
      expect(p.offered, profile).toBe(p.unseen.hits > 0 && p.unseen.precision >= PROFILE_PRECISION[profile]);
      // Questions about health are never served: none of their pairs hits.
      for (const kind of ['health', 'health_same']) expect(p.heldOutByKind[kind]?.hits ?? 0).toBe(0);
    }
    // The held-out part, whose false hits were read and fixed, says 1.000; the unseen set says what a senior gets.
    expect(calibration.permissive.heldOut.precision).toBe(1);
    expect(calibration.permissive.unseen.precision).toBeLessThan(PROFILE_PRECISION.permissive);
    // Aggressive's threshold is its own, below permissive's floor.
    expect(calibration.aggressive.threshold).toBeLessThan(calibration.permissive.threshold);
    expect(settingFor('permissive', new LocalHashEmbedder().modelId, readCalibrations(), readStrictFigures())).toMatchObject({
      strict: true,
      threshold: null,
      reason: expect.stringMatching(/^permissive not offered for kohami-local-hash-v1: precision 0\.8\d\d, .* below its promise 0\.95; strict: the same question only/),
    });
  });

  it('strict’s shipped figures are what its rules give today on the very files they name: never stale', () => {
    const shipped = readStrictFigures()!;
    const now = measureStrict(shipped.sets.map(({ set }) => ({ set, pairs: readPairs(set) })));
    expect(now.sets.map(({ set, ...score }) => ({ set, ...score }))).toEqual(shipped.sets);
    expect(shipped.offered).toBe(now.offered);
    expect(shipped.offered).toBe(true);
    // The blind adversarial probes and the realistic repeats are among them; the first probes, read for a fix, are not.
    expect(shipped.sets.map((s) => s.set)).toEqual(expect.arrayContaining(['calibration/pairs-strict-probes-2.fr.jsonl', 'calibration/repeats.fr.jsonl']));
    expect(shipped.sets.map((s) => s.set)).not.toContain('calibration/pairs-strict-probes.fr.jsonl');
  });

  it('refuses a malformed pairs file with the line number, an empty one, and a missing one', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pairs-'));
    await writeFile(path.join(dir, 'p.jsonl'), '{"a":"x","b":"y","same":true}\n{"a":"x","same":"yes"}\n');
    expect(() => readPairs(path.join(dir, 'p.jsonl'))).toThrow(/p\.jsonl:2/);
    await writeFile(path.join(dir, 'empty.jsonl'), '\n\n');
    expect(() => readPairs(path.join(dir, 'empty.jsonl'))).toThrow(/no labelled pairs/);
    expect(() => readPairs(path.join(dir, 'missing.jsonl'))).toThrow(/cannot read the pairs file \(ENOENT\)/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KioskClient } from '../support/kiosk-client.ts';
import { controllableModel, failingModel, streamingModel, switchableModel } from '../support/models.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** One agent model for the file's runtime; each test swaps its behaviour. */
const agent = switchableModel(streamingModel(['Il fera beau.']));
let rt: TestRuntime;
let kiosk: KioskClient;
let n = 0;
const turn = (text: string) => kiosk.turn(`q${n++}`, text);
const consent = (method: 'PUT' | 'DELETE', category: string) =>
  fetch(`${rt.url}/v1/admin/seniors/${rt.seed!.seniorId}/consents/${category}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
const lookups = async (outcome: string) => (await rt.metrics.semanticCacheLookups.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

beforeAll(async () => {
  // The similarity profile: this file checks the near-miss guard end to end (strict alone is checked below).
  rt = await startTestRuntime({ agentModel: agent }, { TURN_BUDGET_MS: '400', SEMANTIC_CACHE_PROFILE: 'permissive' });
  kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
});
afterAll(async () => {
  kiosk.close();
  await rt.close();
});

describe('semantic cache, end to end', () => {
  it('is on with the permissive profile of the local embedder’s calibration, said with its unseen figures', () => {
    // The tests' calibration (test/support/cache-calibration.ts): the shipped thresholds, offered.
    expect(rt.semanticCacheSetting).toMatch(/^permissive: threshold 0\.\d{4}, precision 0\.\d{3}, hit rate 0\.\d{3} \(0\.\d{3} outside health, never cached\) on \d+ pairs written after the rules \(a test fixture: the shipped thresholds, offered\)$/);
  });

  it('does not cache a follow-up with no exchange before it (bypass)', async () => {
    agent.use(streamingModel(['De qui parlez-vous ?']));
    const bypass = await lookups('bypass');
    expect(await turn('Et elle, elle va bien ?')).toMatchObject({ flux: 'agent' });
    expect(await lookups('bypass')).toBe(bypass + 1);
  });

  it('the issue’s session: « il fait chaud » is not answered with the reply « il fait froid » got', async () => {
    agent.use(streamingModel(['Merci de me le dire. Voulez-vous un plaid ?']));
    // Asked, not said: a remark (« Il fait froid. ») is keyed by the exchange before it, as an answer is.
    expect(await turn('Il fait froid dans ma chambre ?')).toMatchObject({ flux: 'agent' });
    const refused = await lookups('refused');
    agent.use(streamingModel(['Voulez-vous que j’ouvre un peu la fenêtre ?']));
    expect(await turn('Il fait chaud dans ma chambre ?')).toMatchObject({ flux: 'agent', text: 'Voulez-vous que j’ouvre un peu la fenêtre ?' });
    expect(await lookups('refused')).toBe(refused + 1);
    expect(await turn('Dans ma chambre, il fait froid ?')).toMatchObject({ flux: 'semantic_cache', text: 'Merci de me le dire. Voulez-vous un plaid ?' });
  });

  it('answers a repeated question from the cache, with no model call', async () => {
    agent.use(streamingModel(['Il fera beau et doux.']));
    expect(await turn('Quel temps fera-t-il demain ?')).toMatchObject({ flux: 'agent', text: 'Il fera beau et doux.' });
    const calls = agent.calls;
    const hits = await lookups('hit');
    expect(await turn('Quel temps fera-t-il demain ?')).toMatchObject({ flux: 'semantic_cache', text: 'Il fera beau et doux.' });
    expect(agent.calls).toBe(calls);
    expect(await lookups('hit')).toBe(hits + 1);
  });

  it('near-misses in a detail are refused by the guard', async () => {
    agent.use(streamingModel(['Samedi, il pleuvra.']));
    expect(await turn('Quel temps fera-t-il samedi ?')).toMatchObject({ flux: 'agent', text: 'Samedi, il pleuvra.' });
    agent.use(streamingModel(['Oui, demain matin.']));
    await turn('Est-ce que ma voisine passe bien demain matin pour le café ?');
    const refused = await lookups('refused');
    agent.use(streamingModel(['Jeudi, elle ne passe pas.']));
    expect(await turn('Est-ce que ma voisine passe bien jeudi matin pour le café ?')).toMatchObject({ flux: 'agent', text: 'Jeudi, elle ne passe pas.' });
    expect(await lookups('refused')).toBe(refused + 1);
  });

  it('never answers a question about health from the cache, asked twice the same way, and counts it', async () => {
    const health = async () => (await rt.metrics.semanticCacheRefusals.get()).values.find((v) => v.labels.reason === 'health')?.value ?? 0;
    const before = await health();
    agent.use(streamingModel(['Oui, c’est l’heure de votre cachet.']));
    expect(await turn('Je peux prendre mon cachet maintenant ?')).toMatchObject({ flux: 'agent' });
    agent.use(streamingModel(['Attendez plutôt midi.']));
    expect(await turn('Je peux prendre mon cachet maintenant ?')).toMatchObject({ flux: 'agent', text: 'Attendez plutôt midi.' });
    expect(await health()).toBe(before + 2);
  });

  it('never stores an SOS reply (a failing model)', async () => {
    agent.use(failingModel(4));
    expect(await turn('Quelle est la capitale du Pérou ?')).toMatchObject({ flux: 'sos' });
    agent.use(streamingModel(['Oui, en voici une.']));
    expect(await turn('Quelle est la capitale du Pérou ?')).toMatchObject({ flux: 'agent' });
  });

  it('never stores an interrupted reply', async () => {
    const model = controllableModel(['Il était ', 'une fois.']);
    agent.use(model);
    kiosk.send({ type: 'turn', turnId: 'barge', transcript: 'Parle-moi des pirates.' });
    await kiosk.next((f) => f.type === 'reply.delta' && f.turnId === 'barge');
    kiosk.send({ type: 'interrupt', turnId: 'barge' });
    expect(await kiosk.next((f) => f.type === 'reply.done' && f.turnId === 'barge')).toMatchObject({ interrupted: true });
    model.release();
    agent.use(streamingModel(['Les pirates.']));
    expect(await turn('Parle-moi des pirates.')).toMatchObject({ flux: 'agent' });
  });

  it('never stores a reply cut by a kiosk that disconnects', async () => {
    const model = controllableModel(['Alors ', 'voilà.']);
    agent.use(model);
    const other = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    await other.start(true);
    other.send({ type: 'turn', turnId: 'gone', transcript: 'Tu peux me lire une recette de crêpes ?' });
    await other.next('reply.delta');
    other.socket.terminate();
    await other.closed;
    // The reply is cut once the runtime knows the kiosk is gone (the actor's SOCKET.LOST).
    await expect.poll(() => rt.registry.get(rt.seed!.seniorId)?.link ?? null).toBeNull();
    model.release();
    kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    await kiosk.start(true);
    agent.use(streamingModel(['La recette des crêpes.']));
    expect(await turn('Tu peux me lire une recette de crêpes ?')).toMatchObject({ flux: 'agent' });
  });

  it('a consent change drops the senior’s cached replies; the neutral line is never stored', async () => {
    agent.use(streamingModel(['Le marché ouvre à 8h.']));
    await turn('À quelle heure ouvre le marché ?');
    expect(await turn('À quelle heure ouvre le marché ?')).toMatchObject({ flux: 'semantic_cache' });
    expect(rt.semanticCache.size).toBeGreaterThan(0);
    await consent('DELETE', 'conversation');
    expect(rt.semanticCache.size).toBe(0);
    expect(await turn('À quelle heure ouvre le marché ?')).toMatchObject({ flux: 'neutral' });
    await consent('PUT', 'conversation');
    expect(await turn('À quelle heure ouvre le marché ?')).toMatchObject({ flux: 'agent' });
  });

  it('erasure drops the cache entries with the rest', async () => {
    expect(rt.semanticCache.size).toBeGreaterThan(0);
    const res = await fetch(`${rt.url}/v1/admin/seniors/${rt.seed!.seniorId}/data`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = (await res.json()) as { erased: Record<string, number> };
    expect(body.erased.semantic_cache).toBeGreaterThan(0);
    expect(rt.semanticCache.size).toBe(0);
    expect((await kiosk.next('session.closed')).reason).toBe('erased');
  });

  it('reports every lookup on /metrics', async () => {
    const text = await rt.metrics.registry.metrics();
    for (const outcome of ['hit', 'miss', 'refused', 'bypass']) expect(text).toContain(`kohami_semantic_cache_lookups_total{outcome="${outcome}"}`);
    expect(text).toContain('kohami_semantic_cache_best_similarity_bucket');
    expect(text).toContain('kohami_semantic_cache_entries 0');
  });
});

describe('the default profile, strict, end to end', () => {
  it('serves the same question re-asked with a hesitation and an inversion, never a reworded one, and says so at start', async () => {
    const model = switchableModel(streamingModel(['Votre fille vient dimanche.']));
    const strict = await startTestRuntime({ agentModel: model }, { TURN_BUDGET_MS: '400' });
    const k = await KioskClient.connect(strict.wsUrl, KIOSK_TOKEN);
    try {
      await k.start();
      expect(strict.semanticCacheSetting).toMatch(/^strict: the same question only, precision 1\.000 on the least precise of \d+ sets its rules never saw/);
      expect(await k.turn('s1', 'Quand est-ce que ma fille vient ?')).toMatchObject({ flux: 'agent' });
      const calls = model.calls;
      expect(await k.turn('s2', 'Euh… ma fille vient quand, déjà ?')).toMatchObject({ flux: 'semantic_cache', text: 'Votre fille vient dimanche.' });
      expect(model.calls).toBe(calls);
      // A paraphrase the guard would prove is not the same words: the agent answers.
      expect(await k.turn('s3', 'C’est quel jour que ma fille passe ?')).toMatchObject({ flux: 'agent' });
      expect(model.calls).toBe(calls + 1);
      // No embedding of the question for the cache: only recall asked for it.
      expect((await strict.metrics.registry.metrics())).not.toMatch(/kohami_semantic_cache_best_similarity_count [1-9]/);
    } finally {
      k.close();
      await strict.close();
    }
  });
});

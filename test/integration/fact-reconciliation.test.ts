import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NoopMemoryEmbedder } from '../../adapters/embedders/noop-memory-embedder.ts';
import { MemorySearch } from '../../adapters/memory/memory-search.ts';
import { PgVectorMemoryAdapter } from '../../adapters/memory/pgvector-memory.adapter.ts';
import { createModels } from '../../adapters/models/model-provider.ts';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import { MistralSmallMemoryExtractor } from '../../adapters/subagents/mistral-small-memory-extractor.ts';
import type { Exchange } from '../../machines/memory/derivation.ts';
import { SessionFacts } from '../../runtime/jobs/session-facts.ts';
import { createLogger } from '../../runtime/logger.ts';
import { createSenior, migratedDatabase } from '../support/database.ts';
import { unit } from '../support/embeddings.ts';
import { factOperation, FakeMistral, heldFactsShown, isFactExtraction, type ShownFact, type StructuredCall } from '../support/fake-mistral.ts';

/**
 * Facts reconciled at session close, end to end below the HTTP layer: the real extractor on the
 * real @ai-sdk/mistral adapter against the local fake Mistral (which answers the reconciliation
 * format), `mistral-embed`'s client against the same fake, the real pgvector adapter on PGlite.
 */
const logger = createLogger('silent');
let db: Awaited<ReturnType<typeof migratedDatabase>>;
let mistral: FakeMistral;
let models: ReturnType<typeof createModels>;
let memory: PgVectorMemoryAdapter;
let facts: PgMemoryFactsRepository;
let sessionFacts: SessionFacts;
/** What the fake extraction answers, from the facts it was shown; every call it saw. */
let answer: (shown: ShownFact[], call: StructuredCall) => unknown[];
const extractions: StructuredCall[] = [];

const session: Exchange[] = [{ transcript: 'ma fille Claire habite à Lyon depuis longtemps', replyText: 'C’est une belle ville.' }];
const LYON = 'Sa fille Claire vit à Lyon.';
const NANTES = 'Sa fille Claire vit désormais à Nantes.';

beforeAll(async () => {
  db = await migratedDatabase();
  mistral = await new FakeMistral().start();
  mistral.structured = (call) => {
    if (!isFactExtraction(call)) return {};
    extractions.push(call);
    return { facts: answer(heldFactsShown(call), call) };
  };
  models = createModels({ apiKey: 'test-key', baseUrl: mistral.baseUrl, agentModelId: 'mistral-small-2603', subagentModelId: 'mistral-small-2603', env: 'test' });
  memory = new PgVectorMemoryAdapter(db.pool, models.embedder, logger);
  facts = new PgMemoryFactsRepository(db.pool);
  sessionFacts = new SessionFacts({ extractor: new MistralSmallMemoryExtractor(models.subagent, logger), facts, memory, logger });
});
afterAll(async () => {
  await mistral.stop();
  await db.close();
});
beforeEach(() => {
  mistral.embed = null;
  extractions.length = 0;
});

const rows = async (senior: string) =>
  (await db.pool.query<{ id: string; fact: string; invalid_at: Date | null }>('SELECT id, fact, invalid_at FROM memory_facts WHERE senior_id = $1 ORDER BY seq', [senior])).rows;

describe('facts reconciled at session close', () => {
  it('40 sessions that each extract the same fact leave 1 row, whatever the model answers', async () => {
    const senior = await createSenior(db);
    // A model that ignores its instructions: it re-adds the fact every session, in varying case and
    // punctuation, and every other time copies the held fact back from its own prompt.
    const spellings = [LYON, 'sa fille Claire vit à Lyon', 'Sa fille claire vit a Lyon !', ' Sa  fille Claire vit à Lyon. '];
    answer = (shown) => [factOperation({ op: 'add', content: shown[0] && extractions.length % 2 === 0 ? shown[0].content : spellings[extractions.length % 4]!, category: 'contacts' })];
    for (let i = 0; i < 40; i++) await sessionFacts.reconcile(senior, session);
    expect(extractions).toHaveLength(40);
    const held = await rows(senior);
    expect(held).toEqual([expect.objectContaining({ fact: spellings[1], invalid_at: null })]);
    // From the second session on, the extractor was shown the fact it holds, by reference.
    expect(heldFactsShown(extractions[1]!)).toEqual([{ ref: 'F1', category: 'contacts', content: spellings[1] }]);
  });

  it('a model that follows the format answers none for a held fact: nothing is written', async () => {
    const senior = await createSenior(db);
    answer = (shown) => (shown.length === 0 ? [factOperation({ op: 'add', content: LYON, category: 'contacts' })] : [factOperation({ op: 'none', target: shown[0]!.ref })]);
    const first = await sessionFacts.reconcile(senior, session);
    const second = await sessionFacts.reconcile(senior, session);
    expect([first, second]).toEqual([
      { added: 1, updated: 0, invalidated: 0, unchanged: 0 },
      { added: 0, updated: 0, invalidated: 0, unchanged: 1 },
    ]);
    expect(await rows(senior)).toHaveLength(1);
  });

  it('a fact updated in a later session: the old one is kept invalidated, and no read path returns it', async () => {
    const senior = await createSenior(db);
    answer = (shown) => (shown.length === 0 ? [factOperation({ op: 'add', content: LYON, category: 'contacts' })] : [factOperation({ op: 'update', target: shown[0]!.ref, content: NANTES, category: 'contacts' })]);
    await sessionFacts.reconcile(senior, session);
    const before = new Date();
    expect(await sessionFacts.reconcile(senior, session)).toEqual({ added: 0, updated: 1, invalidated: 0, unchanged: 0 });
    const [old, current] = await rows(senior);
    expect(old).toMatchObject({ fact: LYON });
    expect(old!.invalid_at!.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(current).toMatchObject({ fact: NANTES, invalid_at: null });

    // Recall (ranked, with the query on the old fact's own vector), its chronological fallback, the
    // agent's search_memory, the dream's and the recognizer's reads, the next reconciliation.
    expect((await memory.search(LYON, senior, 5)).map((f) => f.content)).toEqual([NANTES]);
    expect((await new PgVectorMemoryAdapter(db.pool, new NoopMemoryEmbedder(), logger).search('Lyon', senior, 5)).map((f) => f.content)).toEqual([]);
    await db.pool.query("UPDATE memory_facts SET embedding_model = 'noop-zero' WHERE senior_id = $1", [senior]);
    expect((await new PgVectorMemoryAdapter(db.pool, new NoopMemoryEmbedder(), logger).search('Lyon', senior, 5)).map((f) => f.content)).toEqual([NANTES]);
    await db.pool.query("UPDATE memory_facts SET embedding_model = 'mistral-embed' WHERE senior_id = $1", [senior]);
    const consents = new PgConsentAdapter(db.pool);
    expect((await new MemorySearch(db.pool, consents, memory, models.embedder).searchMemory(senior, LYON)).facts).toEqual([NANTES]);
    expect(await facts.latest(senior, 30)).toEqual([NANTES]);
    expect(await facts.latest(senior, 30, 'contacts')).toEqual([NANTES]);
    answer = () => [];
    await sessionFacts.reconcile(senior, session);
    expect(heldFactsShown(extractions.at(-1)!).map((f) => f.content)).toEqual([NANTES]);
  });

  it('an update back to a fact that was superseded stores it again as valid, once', async () => {
    const senior = await createSenior(db);
    const script = [LYON, NANTES, LYON, LYON];
    answer = (shown) => {
      const content = script[extractions.length - 1]!;
      return shown.length === 0 ? [factOperation({ op: 'add', content, category: 'contacts' })] : [factOperation({ op: 'update', target: shown[0]!.ref, content, category: 'contacts' })];
    };
    for (let i = 0; i < script.length; i++) await sessionFacts.reconcile(senior, session);
    const all = await rows(senior);
    expect(all.map((r) => [r.fact, r.invalid_at === null])).toEqual([
      [LYON, false],
      [NANTES, false],
      [LYON, true],
    ]);
  });

  it('invalidate marks the held fact, which recall no longer returns', async () => {
    const senior = await createSenior(db);
    answer = (shown) => (shown.length === 0 ? [factOperation({ op: 'add', content: 'Elle porte des lunettes pour lire.', category: 'vision' })] : [factOperation({ op: 'invalidate', target: shown[0]!.ref })]);
    await sessionFacts.reconcile(senior, session);
    expect(await sessionFacts.reconcile(senior, session)).toEqual({ added: 0, updated: 0, invalidated: 1, unchanged: 0 });
    expect(await rows(senior)).toEqual([expect.objectContaining({ invalid_at: expect.any(Date) })]);
    expect(await memory.search('lunettes', senior, 5)).toEqual([]);
  });

  it('a target the extractor was not shown is dropped: the model cannot touch another fact', async () => {
    const senior = await createSenior(db);
    const other = await createSenior(db);
    const theirs = await memory.persist({ seniorId: other, content: LYON, category: 'contacts' });
    answer = () => [factOperation({ op: 'invalidate', target: 'F7' }), factOperation({ op: 'update', target: theirs.id, content: NANTES, category: 'contacts' })];
    expect(await sessionFacts.reconcile(senior, session)).toEqual({ added: 0, updated: 0, invalidated: 0, unchanged: 0 });
    expect(await rows(other)).toEqual([expect.objectContaining({ fact: LYON, invalid_at: null })]);
    expect(await rows(senior)).toEqual([]);
  });

  it('the extractor is shown only the facts of categories whose consent is active, as recall reads them', async () => {
    const senior = await createSenior(db, ['conversation', 'contacts', 'sante']);
    await memory.persist({ seniorId: senior, content: LYON, category: 'contacts' });
    await memory.persist({ seniorId: senior, content: 'Elle prend un traitement pour la tension.', category: 'sante' });
    await db.pool.query("UPDATE consents SET revoked_at = now() WHERE senior_id = $1 AND category = 'sante'", [senior]);
    answer = () => [];
    await sessionFacts.reconcile(senior, session);
    expect(heldFactsShown(extractions[0]!)).toEqual([{ ref: 'F1', category: 'contacts', content: LYON }]);
    expect(extractions[0]!.user).not.toContain('tension');
  });

  it('the same meaning by the embedding, agreed by the near-miss guard, is not stored twice; a different fact nearby is', async () => {
    const senior = await createSenior(db);
    // Within 0.05 of each other (mistral-embed's uncalibrated default): a paraphrase and a change of place.
    const near: Record<string, number[]> = {
      'Elle aime les fraises du marché.': unit({ 3: 1 }),
      'Elle adore les fraises du marché.': unit({ 3: 1, 4: 0.1 }),
      'Elle aime les fraises du marché de Nantes.': unit({ 3: 1, 4: -0.1 }),
    };
    mistral.embed = (text) => near[text] ?? unit({ 900: 1 });
    const said = Object.keys(near);
    answer = () => [factOperation({ op: 'add', content: said[extractions.length - 1]!, category: 'profil' })];
    for (let i = 0; i < said.length; i++) await sessionFacts.reconcile(senior, session);
    expect((await rows(senior)).map((r) => r.fact)).toEqual(['Elle aime les fraises du marché.', 'Elle aime les fraises du marché de Nantes.']);
  });
});

import { createMistral } from '@ai-sdk/mistral';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readerFold } from '../../machines/memory/reader-fold.ts';
import { everyStoredText } from '../support/canary-sweep.ts';
import { factOperation, FakeMistral, isFactExtraction, type StructuredCall } from '../support/fake-mistral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/*
 * Issue 33, item 5, end to end: the real sub-agent adapters (@ai-sdk/mistral) against the local
 * fake Mistral, whose model copies what the senior said in disguise — the whole sentence in
 * Cyrillic look-alikes (the case), letters spaced out, in 「corner brackets」, with
 * invisible Hangul fillers inside its words, in full-width letters, with stroked letters.
 * Nothing it writes may reach `mood_scores.summary`, a segment or a fact.
 */

const CANARY = 'zorglophone';
const TURNS = [
  `ce ${CANARY} rouillé me rappelle toujours mon enfance au bord de la mer`,
  'mon voisin passe tous les mardis pour arroser les tomates du jardin',
  'la chorale répète une nouvelle chanson pour la fête du printemps',
];
const SESSIONS = 2;
const SCORE = 61;
const CLEAN_FACT = 'Elle garde de bons souvenirs de sa jeunesse.';

const swap = (text: string, from: string, to: readonly string[]) => text.replace(new RegExp(`[${from}]`, 'g'), (c) => to[from.indexOf(c)]!);
/** Each way the model disguises a senior sentence: every one read as a copy by a reader, and every one let through by the guard of before issue 33. */
const DISGUISES: ReadonlyArray<(said: string) => string> = [
  (said) => swap(said, 'aeopc', [...'аеорс']),
  (said) => `Le senior a évoqué ${said.split(' ').map((word) => [...word].join(' ')).join('   ')}.`,
  (said) => `Le senior a parlé de 「${said.split(' ').slice(0, 3).join(' ')}」 avec plaisir.`,
  (said) => said.replace(/(\p{L}{2})(?=\p{L})/gu, '$1\u3164'),
  (said) => swap(said, 'abcdefghijklmnopqrstuvwxyz', [...'ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ']).replace(/ｅ/g, 'е'),
  (said) => swap(said, 'lthod', [...'łŧħøđ']),
];

/** What the senior said, as the sub-agent prompt shows it (« Personne : … » lines). */
const saidIn = (call: StructuredCall) => [...call.user.matchAll(/^Personne : (.+)$/gmu)].map((m) => m[1]!);

const fake = new FakeMistral();
/** Summaries answered so far, per system prompt: each kind of summary takes the disguises in turn. */
const summaries = new Map<string, number>();
/** Every disguised text the model answered. */
const disguised: string[] = [];
const agent = streamingModel(['Quelle belle histoire, racontez-moi encore.']);
let rt: TestRuntime;

function answer(call: StructuredCall): unknown {
  if (call.schema.includes('"score"')) return { score: SCORE };
  const said = saidIn(call);
  if (isFactExtraction(call)) {
    const copies = said.flatMap((line) => DISGUISES.map((disguise) => disguise(line)));
    disguised.push(...copies);
    return { facts: [...copies, CLEAN_FACT].map((content) => factOperation({ op: 'add', content, category: 'profil' })) };
  }
  const n = summaries.get(call.system) ?? 0;
  summaries.set(call.system, n + 1);
  const summary = DISGUISES[n % DISGUISES.length]!(said.join(' '));
  disguised.push(summary);
  return { summary };
}

beforeAll(async () => {
  await fake.start();
  fake.structured = answer;
  const subagentModel = createMistral({ apiKey: 'test-key', baseURL: fake.baseUrl })('mistral-small-2603');
  rt = await startTestRuntime({ agentModel: agent, subagentModel });
  for (let s = 0; s < SESSIONS; s++) {
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    await kiosk.start();
    for (const [i, transcript] of TURNS.entries()) await kiosk.turn(`s${s}-${i}`, transcript);
    kiosk.send({ type: 'session.end' });
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'ended' });
    kiosk.close();
  }
  expect(await rt.closeJobs.drain(20_000)).toBe(true);
}, 60_000);
afterAll(async () => {
  await rt.close();
  await fake.stop();
});

describe('a sub-agent that copies the senior in disguise (issue 33, item 5)', () => {
  it('was asked for every derivation, and answered every disguise as a per-turn summary', () => {
    expect(summaries.size).toBe(2);
    expect([...summaries.values()].sort()).toEqual([SESSIONS, SESSIONS * TURNS.length]);
    expect(disguised.some((text) => text.includes(DISGUISES[0]!(CANARY)))).toBe(true);
  });

  it('every mood row is written with its score and no summary; every segment without one', async () => {
    const senior = rt.seed!.seniorId;
    const moods = await rt.db.pool.query('SELECT score, summary FROM mood_scores WHERE senior_id = $1', [senior]);
    expect(moods.rows).toEqual(Array.from({ length: SESSIONS * TURNS.length }, () => ({ score: SCORE, summary: null })));
    const segments = await rt.db.pool.query('SELECT summary, turn_count FROM segments WHERE senior_id = $1', [senior]);
    expect(segments.rows).toEqual(Array.from({ length: SESSIONS }, () => ({ summary: null, turn_count: TURNS.length })));
  });

  it('each disguised fact is dropped alone: the clean one is kept', async () => {
    const facts = await rt.db.pool.query<{ fact: string }>('SELECT fact FROM memory_facts WHERE senior_id = $1', [rt.seed!.seniorId]);
    expect(new Set(facts.rows.map((r) => r.fact))).toEqual(new Set([CLEAN_FACT]));
  });

  it('no table holds the canary, even read as a reader sees it, letter by letter; the logs name the rule only', async () => {
    const letters = (text: string) => readerFold(text).toLowerCase().replace(/[^\p{L}]/gu, '');
    const stored = await everyStoredText(rt.db.pool);
    expect(stored).toContain(CLEAN_FACT);
    expect(letters(stored)).not.toContain(CANARY);
    expect(letters(rt.logs.text)).not.toContain(CANARY);
    expect(rt.logs.text).toContain('repeated the conversation verbatim');
  });
});

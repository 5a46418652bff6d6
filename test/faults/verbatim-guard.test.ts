import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyStoredText } from '../support/canary-sweep.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { quotingModel, streamingModel, systemPromptOf } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/*
 * Issue 10, item 2: a sub-agent model that quotes what it reads (whole sentences in quotes, a
 * quoted clause, a paraphrase with six copied words) for every derivation. Nothing it copies may
 * be stored, and a canary sentence spoken in a session must be in no byte of the data directory.
 */

const CANARY = 'zorglophone';
const REPLY_CANARY = 'plumovent';
const CANARY_SENTENCE = `ce ${CANARY} rouillé me rappelle toujours mon enfance au bord de la mer`;
const REPLY = `Quelle belle histoire, ce ${REPLY_CANARY} chante encore dans votre mémoire.`;
const SESSIONS = [
  [
    CANARY_SENTENCE,
    'mon voisin passe tous les mardis pour arroser les tomates du jardin',
    'la chorale répète une nouvelle chanson pour la fête du printemps',
    'hier soir le chat a renversé le vase bleu de la cuisine',
    "je tricote une écharpe rouge pour l'anniversaire de mon petit-fils",
    'nous avons regardé un vieux film en noir et blanc à la télévision',
    "la boulangère m'a mis de côté une brioche aux pralines ce matin",
    'je crois que la pluie va durer toute la journée de demain',
    'mes géraniums ont enfin fleuri sur le rebord de la fenêtre',
    'le marché du samedi était plein de monde avec ces belles fraises',
  ],
  ["ma sœur m'a téléphoné depuis Marseille pour parler des vacances d'été", 'le facteur apporte souvent des cartes postales de mes anciens élèves'],
  ['je range les photos du mariage dans un grand album en cuir', 'les hirondelles sont revenues sous le toit de la grange cette semaine'],
];
const TURNS = SESSIONS.flat().length;
const clean = {
  score: 55,
  fact: 'Elle garde de bons souvenirs de sa jeunesse.',
  pattern: 'Elle aime évoquer la musique de son enfance',
  question: 'Comment se passe sa semaine ?',
  interest: 'musique',
};

const model = quotingModel(clean);
const agent = streamingModel([REPLY]);
let dir: string;
let rt: TestRuntime;

/** Calls of the sub-agent whose system prompt contains `marker`. */
const callsOf = (marker: string) => [...model.state.calls].filter(([system]) => system.includes(marker)).reduce((n, [, calls]) => n + calls, 0);

async function filesContaining(root: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if ((await readFile(file)).includes(needle)) hits.push(file);
  }
  return hits;
}

async function session(turns: string[], tag: string): Promise<void> {
  const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
  for (const [i, transcript] of turns.entries()) await kiosk.turn(`${tag}-${i}`, transcript);
  kiosk.send({ type: 'session.end' });
  expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'ended' });
  kiosk.close();
}

beforeAll(async () => {
  dir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-verbatim-guard-')), 'pglite');
  // A 13-message window folds from the seventh turn on: the window summarizer runs too.
  rt = await startTestRuntime({ agentModel: agent, subagentModel: model }, { PGLITE_DATA_DIR: dir, WINDOW_MAX_MESSAGES: '13' });
  for (const [i, turns] of SESSIONS.entries()) await session(turns, `s${i}`);
  expect(await rt.closeJobs.drain(20_000)).toBe(true);
}, 60_000);
afterAll(async () => {
  await rt.close();
  await rm(path.dirname(dir), { recursive: true, force: true });
});

describe('a sub-agent that quotes its input (issue 10, item 2)', () => {
  it('was given every kind of derivation, each copied in all three ways', () => {
    expect(callsOf('Tu résumes un échange')).toBe(TURNS);
    expect(callsOf('Tu résumes une conversation entière')).toBe(SESSIONS.length);
    expect(callsOf('Tu extrais')).toBe(SESSIONS.length);
    expect(callsOf('Tu tiens le fil')).toBeGreaterThanOrEqual(3);
    expect([...model.state.copied].some((piece) => piece.includes(CANARY))).toBe(true);
    expect([...model.state.copied].some((piece) => piece.includes(REPLY_CANARY))).toBe(true);
  });

  it('every mood row is written with its score and no summary; every segment without one', async () => {
    const moods = await rt.db.pool.query('SELECT score, summary FROM mood_scores WHERE senior_id = $1', [rt.seed!.seniorId]);
    expect(moods.rows).toHaveLength(TURNS);
    expect(moods.rows.every((r) => r.score === clean.score && r.summary === null)).toBe(true);
    const segments = await rt.db.pool.query('SELECT summary, turn_count FROM segments WHERE senior_id = $1 ORDER BY ended_at', [rt.seed!.seniorId]);
    expect(segments.rows).toEqual(SESSIONS.map((turns) => ({ summary: null, turn_count: turns.length })));
  });

  it('each quoting fact is dropped alone: the clean one is kept', async () => {
    const facts = await rt.db.pool.query<{ fact: string }>('SELECT fact FROM memory_facts WHERE senior_id = $1', [rt.seed!.seniorId]);
    expect(facts.rows.length).toBeGreaterThan(0);
    expect(new Set(facts.rows.map((r) => r.fact))).toEqual(new Set([clean.fact]));
  });

  it('a refused window summary leaves none: the agent never saw a quoting running summary', () => {
    const systems = agent.doStreamCalls.map((_, i) => systemPromptOf(agent, i));
    expect(systems.length).toBeGreaterThan(0);
    expect(systems.some((s) => s.includes('Plus tôt dans cette conversation'))).toBe(false);
    expect(systems.some((s) => s.includes(CANARY))).toBe(false);
  });

  it('no copied fragment is in any column of any table, nor any canary in the logs', async () => {
    const stored = await everyStoredText(rt.db.pool);
    expect(stored).toContain(clean.fact);
    expect([...model.state.copied].filter((piece) => stored.includes(piece))).toEqual([]);
    for (const needle of [CANARY, REPLY_CANARY]) expect(rt.logs.text).not.toContain(needle);
    expect(rt.logs.text).toContain('repeated the conversation verbatim');
  });

  it('the dream drops each output that quotes its inputs (an older note still holding the words), keeps the rest', async () => {
    const senior = await rt.directory.createSenior({ displayName: 'Jeanne', preferredName: 'Jeanne', onboardingDone: true });
    await rt.consents.grant(senior, 'conversation');
    const note = "Le senior a raconté que son accordéon vert dort au grenier depuis l'hiver dernier.";
    await rt.moodScores.insert({ seniorId: senior, score: 60, tier: 'neutre', summary: note, recordedAt: new Date('2026-11-23T10:00:00Z') });
    const before = model.state.copied.size;
    const report = await rt.dream.consolidate(senior, '2026-11-24');
    expect(model.state.copied.size).toBeGreaterThan(before);
    expect(report).toMatchObject({ candidates: 1, compassWritten: true });
    const candidates = await rt.db.pool.query('SELECT pattern FROM consolidation_candidates WHERE senior_id = $1', [senior]);
    expect(candidates.rows).toEqual([{ pattern: clean.pattern }]);
    const profile = await rt.db.pool.query('SELECT interlocutor, compass FROM profiles WHERE senior_id = $1', [senior]);
    expect(profile.rows[0]).toEqual({
      interlocutor: { interests: [clean.interest], recurringTopics: [], patterns: [] },
      compass: { questionsToAsk: [clean.question], avoid: [], uncertainties: [], topicsToExplore: [] },
    });
  });

  it('once the database is closed, no file of its directory (WAL included) holds a canary', async () => {
    await rt.close();
    const files = await readdir(dir, { recursive: true });
    expect(files.some((f) => f.startsWith('pg_wal'))).toBe(true);
    // The scan finds what is stored: the seeded senior's name, the kept fact.
    expect(await filesContaining(dir, 'Marie')).not.toEqual([]);
    expect(await filesContaining(dir, 'bons souvenirs de sa jeunesse')).not.toEqual([]);
    for (const needle of [CANARY, REPLY_CANARY, 'rouillé me rappelle', 'belle histoire, ce']) expect(await filesContaining(dir, needle)).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { factOperation, FakeMistral, heldFactsShown, isFactExtraction, type ShownFact } from '../support/fake-mistral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The close-time pool reconciles each closed session's facts, on the real runtime: the agent and
 * every sub-agent through the real Mistral adapter against the local fake, over real sockets.
 */
const LYON = 'Sa fille Claire vit à Lyon.';
const NANTES = 'Sa fille Claire vit désormais à Nantes.';
let mistral: FakeMistral;
let rt: TestRuntime;
let answer: (shown: ShownFact[]) => unknown[] = () => [];

beforeAll(async () => {
  mistral = await new FakeMistral().start();
  mistral.mode = { kind: 'stream', chunks: ['Je vous écoute.'] };
  mistral.structured = (call) => {
    if (isFactExtraction(call)) return { facts: answer(heldFactsShown(call)) };
    return call.schema.includes('"score"') ? { score: 60 } : { summary: null };
  };
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
});
afterAll(async () => {
  await rt.close();
  await mistral.stop();
});

async function session(token: string, transcript: string): Promise<void> {
  const kiosk = await KioskClient.connect(rt.wsUrl, token);
  await kiosk.start();
  await kiosk.turn('t1', transcript);
  kiosk.send({ type: 'session.end' });
  await kiosk.next('session.closed');
  kiosk.close();
  await rt.closeJobs.drain(10_000);
}

describe('facts reconciled by the close-time jobs', () => {
  it('the same fact from three sessions is one row; a later change supersedes it, listed as invalid and never recalled', async () => {
    const senior = await rt.directory.createSenior({ displayName: 'Lucie', preferredName: 'Lucie', onboardingDone: true });
    for (const c of ['conversation', 'contacts'] as const) await rt.consents.grant(senior, c);
    const token = generateToken('kiosk');
    await rt.directory.addDevice(senior, token);

    // A model that re-adds the fact every time, and then one that updates it.
    answer = () => [factOperation({ op: 'add', content: LYON, category: 'contacts' })];
    for (let i = 0; i < 3; i++) await session(token, 'ma fille Claire habite à Lyon depuis longtemps');
    const rows = async () => (await rt.db.pool.query('SELECT fact, invalid_at IS NULL AS valid FROM memory_facts WHERE senior_id = $1 ORDER BY seq', [senior])).rows;
    expect(await rows()).toEqual([{ fact: LYON, valid: true }]);

    answer = (shown) => [factOperation({ op: 'update', target: shown.find((f) => f.content === LYON)!.ref, content: NANTES, category: 'contacts' })];
    await session(token, 'ma fille Claire a déménagé à Nantes le mois dernier');
    expect(await rows()).toEqual([
      { fact: LYON, valid: false },
      { fact: NANTES, valid: true },
    ]);
    expect((await rt.memory.memory.search('Claire Lyon', senior, 5)).map((f) => f.content)).toEqual([NANTES]);
    const listed = await adminApi(rt)('GET', `/v1/admin/seniors/${senior}/facts`);
    expect(listed.body.data.map((f: { content: string; valid: boolean }) => [f.content, f.valid])).toEqual([
      [NANTES, true],
      [LYON, false],
    ]);
  });
});

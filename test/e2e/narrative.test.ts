import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, subagentModel, systemPromptOf } from '../support/models.ts';
import { adminApi, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const agent = streamingModel(['Bien sûr.']);
let rt: TestRuntime;
let marie: string;

let api: ReturnType<typeof adminApi>;
const systemPrompt = () => systemPromptOf(agent);

/** A fresh session (the profile is read at session start), a few turns, then ended. */
async function session(turns: string[]) {
  const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
  const replies = [];
  for (const [i, t] of turns.entries()) replies.push(await kiosk.turn(`n${i}`, t));
  kiosk.send({ type: 'session.end' });
  await kiosk.next('session.closed');
  kiosk.close();
  return replies;
}

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: agent, subagentModel: subagentModel({ summary: 'Marie a parlé de ses souvenirs.' }) }, { WINDOW_MAX_MESSAGES: '13' });
  api = adminApi(rt);
  marie = rt.seed!.seniorId;
});
afterAll(() => rt.close());

describe('the three memories in the agent’s context', () => {
  it('orders persona → compass → interlocutor → segments → facts → running summary → window, old topics as background', async () => {
    await api('PUT', '/v1/admin/persona', { persona: 'Tu es Kohami, compagnon de Lorient, qui aime la mer.' });
    await api('PUT', `/v1/admin/seniors/${marie}/profile`, {
      interlocutor: { role: 'ancienne institutrice', interests: ['tricot', 'chorale'], recurringTopics: ['sa fille Claire'], patterns: [] },
      compass: { resumeWith: 'la chorale de jeudi', questionsToAsk: ['comment va sa fille'], avoid: ['la santé de son mari'], uncertainties: [], topicsToExplore: [] },
    });
    await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, 'Marie a évoqué son voyage à Quimper.', now(), now(), 4)`, [marie]);
    await api('POST', `/v1/admin/seniors/${marie}/facts`, { content: 'Sa fille Claire habite à Lyon', category: 'contacts' });
    // Eight turns overflow a 13-message window: the oldest are folded into the running summary.
    await session(Array.from({ length: 8 }, (_, i) => `je vous parle de ma fille Claire et du tricot, épisode ${i}`));
    const system = systemPrompt();
    const order = [
      'Tu es Kohami, compagnon de Lorient',
      'reprendre par : la chorale de jeudi',
      'ancienne institutrice',
      'son voyage à Quimper',
      'Sa fille Claire habite à Lyon',
      'Plus tôt dans cette conversation : Marie a parlé de ses souvenirs.',
    ].map((text) => system.indexOf(text));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(system.indexOf('Tu es Kohami')).toBe(0);
    for (const marker of ['seulement si la conversation s\'y prête', 'Ce que vous savez de la personne (arrière-plan)', 'arrière-plan discret']) expect(system).toContain(marker);
    const messages = agent.doStreamCalls.at(-1)!.prompt;
    expect(JSON.stringify(messages.at(-1))).toContain('épisode 7');
  });

  it('a senior’s persona leads over the deployment’s; removing it falls back', async () => {
    expect((await api('GET', `/v1/admin/seniors/${marie}/persona`)).body).toMatchObject({ source: 'deployment' });
    await api('PUT', `/v1/admin/seniors/${marie}/persona`, { persona: 'Tu es Kohami, le compagnon de Marie, qui aime le tricot.' });
    await session(['il pleut aujourd’hui']);
    expect(systemPrompt().indexOf('Tu es Kohami, le compagnon de Marie')).toBe(0);
    expect((await api('DELETE', `/v1/admin/seniors/${marie}/persona`)).body).toMatchObject({ source: 'deployment' });
    expect((await api('DELETE', '/v1/admin/persona')).body).toMatchObject({ source: 'built-in' });
    await session(['il fait beau aujourd’hui']);
    expect(systemPrompt()).toMatch(/^Tu es Kohami, un compagnon de conversation bienveillant/);
  });

  it('a persona change drops the cached replies written under the old one', async () => {
    const [first, second] = await session(['Quelle est la plus haute marée de l’année ?', 'Quelle est la plus haute marée de l’année ?']);
    expect(first!.flux).not.toBe('semantic_cache');
    expect(second!.flux).toBe('semantic_cache');
    expect(rt.semanticCache.size).toBeGreaterThan(0);
    await api('PUT', `/v1/admin/seniors/${marie}/persona`, { persona: 'Tu es Kohami, un compagnon très drôle.' });
    expect(rt.semanticCache.size).toBe(0);
    const [after] = await session(['Quelle est la plus haute marée de l’année ?']);
    expect(after!.flux).not.toBe('semantic_cache');
  });

  it('validates corrections of the interlocutor profile and the compass', async () => {
    const bad = await api('PUT', `/v1/admin/seniors/${marie}/profile`, { interlocutor: { interests: 'tricot' } });
    expect(bad.status).toBe(400);
    expect(String(bad.body.message)).toContain('interests');
    const empty = await api('PUT', '/v1/admin/persona', { persona: '   ' });
    expect(empty.status).toBe(400);
    const ok = await api('PUT', `/v1/admin/seniors/${marie}/profile`, { interlocutor: { role: 'institutrice', interests: ['chorale'] } });
    expect(ok.body).toMatchObject({ interlocutor: { role: 'institutrice', interests: ['chorale'] }, compass: { resumeWith: 'la chorale de jeudi' } });
  });
});

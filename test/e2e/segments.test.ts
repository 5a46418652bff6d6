import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MistralSmallSegmentSummarizer } from '../../adapters/subagents/mistral-small-segment-summarizer.ts';
import { OfflineLanguageModel } from '../../adapters/models/offline-language-model.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { createLogger } from '../../runtime/logger.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { scriptedModel, streamingModel, subagentModel, systemPromptOf } from '../support/models.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const logger = createLogger('silent');
const exchanges = [
  { transcript: 'Ce matin je suis allée au marché avec ma voisine Josiane et nous avons acheté des fraises', replyText: 'Quelle bonne idée !' },
  { transcript: 'Ma fille Claire vient dimanche', replyText: 'Vous allez bien vous amuser.' },
];

describe('MistralSmallSegmentSummarizer (tier 2)', () => {
  it('summarizes a whole session in the third person', async () => {
    const model = scriptedModel({ json: { summary: 'Le senior a parlé du marché et de la visite de sa fille.' } });
    expect(await new MistralSmallSegmentSummarizer(model, logger).summarize(exchanges)).toBe('Le senior a parlé du marché et de la visite de sa fille.');
  });

  it('drops a summary that echoes the conversation, and gives null on failure or offline', async () => {
    const echo = scriptedModel({ json: { summary: `Elle a dit : ${exchanges[0]!.transcript}.` } });
    expect(await new MistralSmallSegmentSummarizer(echo, logger).summarize(exchanges)).toBeNull();
    expect(await new MistralSmallSegmentSummarizer(scriptedModel({ status: 400 }), logger).summarize(exchanges)).toBeNull();
    expect(await new MistralSmallSegmentSummarizer(new OfflineLanguageModel(), logger).summarize(exchanges)).toBeNull();
  });
});

describe('segments, end to end', () => {
  const agent = streamingModel(['Je vous écoute.']);
  const sub = subagentModel({ summary: 'Le senior a évoqué sa journée.' });
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({ agentModel: agent, subagentModel: sub }, { SESSION_PAUSE_MS: '400' });
  });
  afterAll(() => rt.close());

  async function senior(consents: string[] = ['conversation']) {
    const id = await rt.directory.createSenior({ displayName: 'Lucie', preferredName: 'Lucie', onboardingDone: true });
    for (const c of consents) await rt.consents.grant(id, c as 'conversation');
    const token = generateToken('kiosk');
    await rt.directory.addDevice(id, token);
    return { id, kiosk: await KioskClient.connect(rt.wsUrl, token) };
  }
  const segmentsOf = async (id: string) =>
    (await rt.db.pool.query('SELECT summary, turn_count, started_at, ended_at FROM segments WHERE senior_id = $1', [id])).rows;

  it('archives a session closed by session.end as one segment: summary, times, turn count', async () => {
    const { id, kiosk } = await senior();
    await kiosk.start();
    await kiosk.turn('a', 'je suis allée au marché');
    await kiosk.turn('b', 'il faisait beau');
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    await rt.closeJobs.drain(10_000);
    const [segment, ...rest] = await segmentsOf(id);
    expect(rest).toEqual([]);
    expect(segment).toMatchObject({ summary: 'Le senior a évoqué sa journée.', turn_count: 2 });
    expect(segment.ended_at.getTime()).toBeGreaterThanOrEqual(segment.started_at.getTime());
    kiosk.close();
  });

  it('archives a session closed by a pause, and none without the conversation consent', async () => {
    const { id, kiosk } = await senior();
    await kiosk.start();
    await kiosk.turn('a', 'bonjour');
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'pause' });
    await rt.closeJobs.drain(10_000);
    expect(await segmentsOf(id)).toHaveLength(1);
    kiosk.close();

    const without = await senior(['profil']);
    await without.kiosk.start();
    await without.kiosk.turn('a', 'bonjour');
    without.kiosk.send({ type: 'session.end' });
    await without.kiosk.next('session.closed');
    await rt.closeJobs.drain(10_000);
    expect(await segmentsOf(without.id)).toEqual([]);
    without.kiosk.close();
  });

  it('injects exactly the 3 most recent segments at the next session, after the persona and before the window, as background', async () => {
    const { id, kiosk } = await senior();
    for (const [i, day] of ['01', '02', '03', '04'].entries()) {
      await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, $2, $3, $3, 5)`, [
        id,
        `Séance numéro ${i + 1}.`,
        `2026-11-${day}T10:00:00Z`,
      ]);
    }
    await kiosk.start();
    await kiosk.turn('a', 'tu te souviens de ce que je te disais ?');
    const system = systemPromptOf(agent);
    expect(system.indexOf('Tu es Kohami')).toBe(0);
    expect(system).not.toContain('Séance numéro 1.');
    const positions = ['Séance numéro 2.', 'Séance numéro 3.', 'Séance numéro 4.'].map((s) => system.indexOf(s));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(system).toContain('arrière-plan discret');
    expect(JSON.stringify(agent.doStreamCalls.at(-1)!.prompt.at(-1))).toContain('tu te souviens');
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    kiosk.close();
  });

  it('injects nothing while the conversation consent is revoked', async () => {
    const { id, kiosk } = await senior(['conversation', 'profil']);
    await rt.db.pool.query(`INSERT INTO segments (senior_id, summary, started_at, ended_at, turn_count) VALUES ($1, 'Séance secrète.', now(), now(), 2)`, [id]);
    await rt.consents.revoke(id, 'conversation');
    await kiosk.start();
    await rt.consents.grant(id, 'conversation');
    await kiosk.turn('a', 'de quoi avons-nous parlé ?');
    const system = systemPromptOf(agent);
    expect(system).not.toContain('Séance secrète.');
    kiosk.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, systemPromptOf } from '../support/models.ts';
import { RECALL_FACTS, UNRELATED_TURNS } from '../support/recall-facts.ts';
import { adminApi, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

// The real server with its offline embedder (no MISTRAL_API_KEY) and the floor shipped for it.
const FACTS = RECALL_FACTS;
const GLASSES = FACTS[4]![0];

async function runtimeWithFacts(env: Record<string, string>) {
  const model = streamingModel(['Bien ', 'sûr.']);
  const rt = await startTestRuntime({ agentModel: model }, env);
  const api = adminApi(rt);
  for (const [content, category] of FACTS) expect((await api('POST', `/v1/admin/seniors/${rt.seed!.seniorId}/facts`, { content, category })).status).toBe(201);
  const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
  return { rt, kiosk, model };
}

describe('recall over the kiosk socket, with the calibrated floor (the default)', () => {
  let rt: TestRuntime;
  let kiosk: KioskClient;
  let model: ReturnType<typeof streamingModel>;

  beforeAll(async () => {
    ({ rt, kiosk, model } = await runtimeWithFacts({}));
  });
  afterAll(async () => {
    kiosk.close();
    await rt.close();
  });

  it('says the floor it applies', () => {
    expect(rt.recallFloorSetting).toMatch(/^similarity ≥ 0\.\d{4}, held-out precision 0\.\d{3}, recall 0\.\d{3} on \d+ held-out turns/);
  });

  it('an unrelated turn gets no fact: the agent answers, labelled agent, with no fact in its context', async () => {
    expect(await kiosk.turn('u1', UNRELATED_TURNS[0]!)).toMatchObject({ flux: 'agent', text: 'Bien sûr.' });
    const system = systemPromptOf(model);
    for (const [content] of FACTS) expect(system).not.toContain(content);
  });

  it('a related turn gets the fact that answers it, labelled recall', async () => {
    expect(await kiosk.turn('r1', 'Où sont mes lunettes ?')).toMatchObject({ flux: 'recall', text: 'Bien sûr.' });
    const system = systemPromptOf(model);
    expect(system).toContain(GLASSES);
    expect(system).not.toContain(FACTS[0]![0]);
  });
});

describe('recall over the kiosk socket with RECALL_MIN_SIMILARITY=off', () => {
  let rt: TestRuntime;
  let kiosk: KioskClient;
  let model: ReturnType<typeof streamingModel>;

  beforeAll(async () => {
    ({ rt, kiosk, model } = await runtimeWithFacts({ RECALL_MIN_SIMILARITY: 'off' }));
  });
  afterAll(async () => {
    kiosk.close();
    await rt.close();
  });

  it('the same unrelated turn gets five facts and is labelled recall', async () => {
    expect(rt.recallFloorSetting).toContain('RECALL_MIN_SIMILARITY=off');
    expect(await kiosk.turn('u1', UNRELATED_TURNS[0]!)).toMatchObject({ flux: 'recall' });
    expect(FACTS.filter(([content]) => systemPromptOf(model).includes(content))).toHaveLength(5);
  });
});

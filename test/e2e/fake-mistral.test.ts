import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMistral } from '../support/fake-mistral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let mistral: FakeMistral;
let rt: TestRuntime;
let kiosk: KioskClient;

beforeAll(async () => {
  mistral = await new FakeMistral().start();
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, TURN_BUDGET_MS: '500' });
  kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
});
afterAll(async () => {
  kiosk.close();
  await rt.close();
  await mistral.stop();
});

describe('the real @ai-sdk/mistral adapter against a local fake Mistral', () => {
  it('runs in mistral mode and streams the reply to the kiosk', async () => {
    expect(rt.modelMode).toBe('mistral');
    mistral.mode = { kind: 'stream', chunks: ['Quelle ', 'belle ', 'journée.'] };
    kiosk.send({ type: 'turn', turnId: 'm1', transcript: 'il fait beau aujourd’hui' });
    const done = await kiosk.next('reply.done');
    expect(done).toMatchObject({ flux: 'agent', text: 'Quelle belle journée.' });
    const request = mistral.agentRequests.at(-1)!;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.authorization).toBe('Bearer test-key');
    expect(request.body).toMatchObject({ model: 'mistral-small-2603', stream: true });
    const messages = request.body.messages as Array<{ role: string; content: string }>;
    expect(messages[0]!.role).toBe('system');
    expect(JSON.stringify(messages.at(-1))).toContain('il fait beau aujourd’hui');
    expect(messages.at(-1)!.role).toBe('user');
  });

  it('a 503 twice (first call and the retry) gives the SOS line', async () => {
    mistral.mode = { kind: 'status', status: 503 };
    // The agent's calls only: each turn's sub-agent derivations (not streamed) run meanwhile.
    const before = mistral.agentRequests.length;
    expect(await kiosk.turn('m2', 'tu es là ?')).toMatchObject({ flux: 'sos', text: 'Bien sûr, je vous écoute.' });
    expect(mistral.agentRequests.length - before).toBe(2);
  });

  it('a Mistral slower than the budget gives the SOS line', async () => {
    mistral.mode = { kind: 'hang' };
    expect(await kiosk.turn('m3', 'raconte-moi')).toMatchObject({ flux: 'sos' });
    mistral.mode = { kind: 'stream', chunks: ['De retour.'] };
    expect(await kiosk.turn('m4', 'et maintenant ?')).toMatchObject({ flux: 'agent', text: 'De retour.' });
  });
});

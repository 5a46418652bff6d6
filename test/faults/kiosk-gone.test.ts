import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stallAfter } from '../support/fault-models.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, switchableModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime;
const agent = switchableModel(streamingModel(['Oui.']));

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: agent }, { KIOSK_GRACE_MS: '60000' });
});
afterAll(() => rt.close());

describe('fault matrix: the kiosk goes away mid-reply', () => {
  it('the reply is aborted, the turn kept as far as it was sent (interrupted), and a resume within grace goes on', async () => {
    const model = stallAfter(['Il était ']);
    agent.use(model);
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    const ready = await kiosk.start();
    kiosk.send({ type: 'turn', turnId: 'g1', transcript: 'raconte-moi une histoire' });
    await kiosk.next('reply.delta');
    kiosk.socket.terminate();
    // The model call does not outlive the socket, and the session waits for its kiosk.
    await expect.poll(() => model.state.aborted).toBe(1);
    const live = rt.registry.get(ready.seniorId as string)!;
    expect(live.actor.getSnapshot().context.turns.at(-1)).toMatchObject({ turnId: 'g1', reply: 'Il était ', interrupted: true });
    expect(rt.registry.views()[0]).toMatchObject({ connection: 'detached' });

    agent.use(streamingModel(['Me revoilà.']));
    const again = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    expect(await again.start(true)).toMatchObject({ resumed: true, sessionId: ready.sessionId });
    expect(await again.turn('g2', 'tu es là ?')).toMatchObject({ flux: 'agent', text: 'Me revoilà.' });
    again.close();
  });
});

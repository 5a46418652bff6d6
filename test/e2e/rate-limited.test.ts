import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMistral } from '../support/fake-mistral.ts';
import { kioskOnFakeMistral } from '../support/fake-mistral-kiosk.ts';
import type { KioskClient } from '../support/kiosk-client.ts';
import type { TestRuntime } from '../support/runtime.ts';

/**
 * A kiosk over the real runtime while Mistral rate-limits (the FakeMistral playing `rate-limited`:
 * the first chat and embeddings calls answer 429 with a Retry-After): the senior hears the SOS line
 * within the turn's budget, never a blind retry, and the agent again once the Retry-After is over.
 */
const SOS = 'Bien sûr, je vous écoute.';
const TURN_BUDGET_MS = 2500;

let mistral: FakeMistral;
let rt: TestRuntime;
let kiosk: KioskClient;
let close: () => Promise<void>;
/** When each of the agent's (streamed) calls reached the fake. */
const agentCalls: number[] = [];

beforeAll(async () => {
  ({ mistral, rt, kiosk, close } = await kioskOnFakeMistral({ TURN_BUDGET_MS: String(TURN_BUDGET_MS) }, (fake) => {
    fake.mode = { kind: 'stream', chunks: ['Il est ', 'midi.'] };
    fake.onChatRequest = (body) => {
      if (body.stream === true) agentCalls.push(Date.now());
    };
  }));
});
afterAll(() => close());

/** Switches `rate-limited` on afresh (its 429 re-armed), once no derivation is left to take the chat's 429 instead of the agent. */
async function rateLimit(retryAfter: string): Promise<void> {
  expect(await rt.closeJobs.drain(15_000)).toBe(true);
  mistral.rateLimitRetryAfter = retryAfter;
  mistral.behaviours.delete('rate-limited');
  mistral.behaviours.add('rate-limited');
}

describe('a kiosk turn while Mistral rate-limits', () => {
  it('gets the SOS line within the budget, without a second call; the next turn, sent at once, is answered by the agent once the Retry-After is over', async () => {
    await rateLimit('1');
    const calls = agentCalls.length;
    const first = await kiosk.turn('r1', 'quelle heure est-il ?');
    expect(first).toMatchObject({ flux: 'sos', reason: 'rate_limited', text: SOS });
    expect(first.latencyMs).toBeLessThanOrEqual(TURN_BUDGET_MS);
    expect(agentCalls.length - calls).toBe(1);
    const refused = mistral.rateLimited.filter((r) => r.endpoint === 'chat').at(-1)!;

    const second = await kiosk.turn('r2', 'je demandais l’heure');
    expect(second).toMatchObject({ text: 'Il est midi.' });
    expect(['agent', 'recall']).toContain(second.flux);
    expect(agentCalls.length - calls).toBe(2);
    expect(agentCalls.at(-1)! - refused.at).toBeGreaterThanOrEqual(1000);
  });

  it('a Retry-After longer than the budget: the next turn gets the SOS line at once, and no call reaches Mistral', async () => {
    await rateLimit('30');
    const calls = agentCalls.length;
    expect(await kiosk.turn('r3', 'quel temps fait-il ?')).toMatchObject({ flux: 'sos', reason: 'rate_limited' });
    const next = await kiosk.turn('r4', 'je demandais le temps');
    expect(next).toMatchObject({ flux: 'sos', reason: 'rate_limited', text: SOS });
    expect(next.latencyMs).toBeLessThan(TURN_BUDGET_MS);
    expect(agentCalls.length - calls).toBe(1);
  });
});

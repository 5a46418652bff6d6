import { createMistral } from '@ai-sdk/mistral';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_THROTTLE_PAUSE_MS } from '../../adapters/mistral/retry-after.ts';
import { MistralAgentModel } from '../../adapters/models/mistral-agent-model.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { ioTurns, untilIo } from '../support/io-turns.ts';
import { startSession } from '../support/session-harness.ts';

/**
 * The agent's Retry-After end to end below the kiosk: the session machine, the real AgentFluxAdapter and
 * the agent's lean Mistral model, over real HTTP to the FakeMistral playing `rate-limited`. The pause runs
 * on Date and setTimeout, faked here; the machine's timers on its simulated clock, never advanced.
 */
const SOS = 'Bien sûr, je vous écoute.';
let mistral: FakeMistral;
let model: MistralAgentModel;

beforeAll(async () => {
  mistral = await new FakeMistral().start();
  mistral.mode = { kind: 'stream', chunks: ['Il est ', 'midi.'] };
  model = new MistralAgentModel(createMistral({ apiKey: 'k', baseURL: mistral.baseUrl })('mistral-small-2603'), { apiKey: 'k', baseUrl: mistral.baseUrl, env: 'test' });
});
afterAll(() => mistral.stop());
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  // A whole second: an HTTP date names no milliseconds.
  vi.setSystemTime(Date.parse('2026-10-01T10:00:00Z'));
  mistral.behaviours.add('rate-limited');
});
afterEach(() => {
  vi.useRealTimers();
  mistral.behaviours.clear();
  mistral.rateLimitRetryAfter = '1';
});

/** A fresh session, one turn sent, and its `reply.done` once it comes. */
function session() {
  const s = startSession(model);
  let n = 0;
  const turn = (transcript: string) => {
    const turnId = `t${++n}`;
    s.actor.send({ type: 'TURN', turnId, transcript });
    return turnId;
  };
  return { ...s, turn };
}

describe('the agent under a rate limit (429 with Retry-After)', () => {
  it('the turn gets the SOS line at once with one request; the next, sent at once, calls the model when the Retry-After is over and gets the reply', async () => {
    const { turn, done, actor, agentPause } = session();
    const before = mistral.agentRequests.length;
    const t1 = turn('quelle heure est-il ?');
    await untilIo(() => done(t1) !== undefined);
    expect(done(t1)).toMatchObject({ flux: 'sos', text: SOS });
    expect(actor.getSnapshot().context.turns[0]!.sosReason).toBe('rate_limited');
    expect(mistral.agentRequests.length - before).toBe(1);
    expect(agentPause.leftMs).toBe(1000);

    const t2 = turn('je demandais l’heure');
    await vi.advanceTimersByTimeAsync(999);
    await ioTurns();
    expect(mistral.agentRequests.length - before).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await untilIo(() => done(t2) !== undefined);
    expect(done(t2)).toMatchObject({ flux: 'agent', text: 'Il est midi.' });
    expect(mistral.agentRequests.length - before).toBe(2);
  });

  it('a Retry-After past the turn’s budget: the next turn is the SOS line at once, and nothing is sent', async () => {
    mistral.rateLimitRetryAfter = '5';
    const { turn, done, actor, agentPause } = session();
    const before = mistral.agentRequests.length;
    const t1 = turn('quelle heure est-il ?');
    await untilIo(() => done(t1) !== undefined);
    expect(agentPause.leftMs).toBe(5000);
    const t2 = turn('je demandais l’heure');
    await untilIo(() => done(t2) !== undefined);
    expect(done(t2)).toMatchObject({ flux: 'sos', text: SOS, latencyMs: 0 });
    expect(actor.getSnapshot().context.turns.map((t) => t.sosReason)).toEqual(['rate_limited', 'rate_limited']);
    expect(mistral.agentRequests.length - before).toBe(1);
  });

  it.each([
    ['an HTTP date 2 s ahead', () => new Date(Date.now() + 2000).toUTCString(), 2000],
    ['an hour, capped', () => '3600', MAX_THROTTLE_PAUSE_MS],
  ])('Retry-After as %s: the agent pauses for what it says', async (_form, retryAfter, pauseMs) => {
    mistral.rateLimitRetryAfter = retryAfter();
    const { turn, done, agentPause } = session();
    const t1 = turn('quelle heure est-il ?');
    await untilIo(() => done(t1) !== undefined);
    expect(agentPause.leftMs).toBe(pauseMs);
  });
});

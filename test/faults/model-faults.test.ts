import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContractViolations } from '../support/contract-violations.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { KioskClient, type Frame } from '../support/kiosk-client.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

// The real @ai-sdk/mistral adapter, over real sockets, against a local fake Mistral that misbehaves.
const SOS = 'Bien sûr, je vous écoute.';
const CLOSING = '… Pardon, je perds le fil. Je vous écoute.';

let mistral: FakeMistral;
let rt: TestRuntime;
let kiosk: KioskClient;
let n = 0;

beforeAll(async () => {
  mistral = await new FakeMistral().start();
  rt = await startTestRuntime(
    {},
    { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, TURN_BUDGET_MS: '800', AGENT_STALL_MS: '300', REPLY_MAX_MS: '3000', RECALL_BUDGET_MS: '200' },
  );
  kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
});
afterAll(async () => {
  kiosk.close();
  await rt.close();
  await mistral.stop();
});

/** One turn: its deltas, in order, and its `reply.done`. */
async function turn(transcript: string): Promise<{ heard: string; done: Frame }> {
  const turnId = `f${++n}`;
  const from = kiosk.frames.length;
  const done = await kiosk.turn(turnId, transcript);
  const heard = kiosk.frames
    .slice(from)
    .filter((f) => f.type === 'reply.delta' && f.turnId === turnId)
    .map((f) => f.text)
    .join('');
  return { heard, done };
}

/** Nothing stays open at the provider behind a finished turn. */
const nothingOpen = () => expect.poll(() => mistral.open).toEqual({ chat: 0, embeddings: 0 });

describe('fault matrix: the model and the embedder misbehave, the senior always hears an answer', () => {
  it('stalls after its first chunk: the turn ends as heard (reason stall) and the stream is aborted', async () => {
    mistral.mode = { kind: 'stall', chunks: ['Je vous '] };
    const { heard, done } = await turn('raconte-moi ta journée');
    expect(done).toMatchObject({ flux: 'sos', reason: 'stall', text: `Je vous ${CLOSING}` });
    expect(heard).toBe(done.text);
    await nothingOpen();
    expect(rt.registry.views()[0]!.state).toContain('conversation.idle');
  });

  it('drops the connection mid-reply: what was heard, then the closing line (reason model_error)', async () => {
    mistral.mode = { kind: 'break', chunks: ['Alors ', 'voilà'] };
    const { heard, done } = await turn('et ensuite ?');
    expect(done).toMatchObject({ flux: 'sos', reason: 'model_error', text: `Alors voilà ${CLOSING}` });
    expect(heard).toBe(done.text);
  });

  it('a malformed stream: the SOS line', async () => {
    const broken = expectContractViolations();
    mistral.mode = { kind: 'malformed' };
    expect((await turn('tu m’entends ?')).done).toMatchObject({ flux: 'sos', text: SOS });
    expect(broken.map((v) => `${v.side} ${v.message}`)).toContain('answer not JSON');
  });

  // A 429 is not retried: it pauses the agent for its Retry-After (test/e2e/rate-limited.test.ts).
  it('HTTP 503 on the call and its retry: the SOS line', async () => {
    mistral.mode = { kind: 'status', status: 503 };
    expect((await turn('encore une question')).done).toMatchObject({ flux: 'sos', text: SOS, reason: 'model_error' });
  });

  it('slower than the turn budget: the SOS line, and the request is aborted', async () => {
    mistral.mode = { kind: 'hang' };
    expect((await turn('tu es là ?')).done).toMatchObject({ flux: 'sos', text: SOS, reason: 'budget' });
    await nothingOpen();
  });

  it('embeddings that hang: recall and the semantic cache give up at their budget, abort the request, and the agent answers', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Bien sûr.'] };
    mistral.embeddingStatus = 'hang';
    const { done } = await turn('tu te souviens de ma fille ?');
    expect(done).toMatchObject({ flux: 'agent', text: 'Bien sûr.' });
    await nothingOpen();
    mistral.embeddingStatus = 200;
  });

  it('embeddings failing (500): the agent answers without facts', async () => {
    mistral.mode = { kind: 'stream', chunks: ['Je vous écoute.'] };
    mistral.embeddingStatus = 500;
    expect((await turn('parle-moi de mon fils'))).toMatchObject({ done: { flux: 'agent' } });
    mistral.embeddingStatus = 200;
  });

  it('the provider gone altogether (connection refused): the SOS line, and the session lives on', async () => {
    await mistral.stop();
    expect((await turn('allô ?')).done).toMatchObject({ flux: 'sos', text: SOS });
    expect((await turn('bonjour')).done).toMatchObject({ flux: 'cache' });
  });
});

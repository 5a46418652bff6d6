import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalHashEmbedder } from '../../adapters/embedders/local-hash-embedder.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

// The real runtime: recall and the semantic cache both need the turn's question embedded.
const local = new LocalHashEmbedder();
const requested: string[] = [];
const embedder: MemoryEmbedderPort = {
  modelId: local.modelId,
  embed: (texts) => {
    requested.push(...texts);
    return local.embed(texts);
  },
};
const asked = (text: string) => requested.filter((t) => t === text).length;

let rt: TestRuntime;
let kiosk: KioskClient;
let senior: string;
let n = 0;
const turn = (text: string) => kiosk.turn(`e${n++}`, text);
const consent = (method: 'PUT' | 'DELETE') =>
  fetch(`${rt.url}/v1/admin/seniors/${senior}/consents/conversation`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: streamingModel(['Avec plaisir.']), embedder });
  senior = rt.seed!.seniorId;
  kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
});
afterAll(async () => {
  kiosk.close();
  await rt.close();
});

describe('the turn’s question is embedded once', () => {
  it('recall and the semantic cache share one embedding request', async () => {
    const misses = async () => (await rt.metrics.semanticCacheLookups.get()).values.find((v) => v.labels.outcome === 'miss')?.value ?? 0;
    const before = await misses();
    expect(await turn('Parlez-moi des oiseaux du jardin')).toMatchObject({ flux: 'agent', text: 'Avec plaisir.' });
    // Both looked at the question: recall (consent given) and the semantic cache (a miss, then the agent).
    expect(await misses()).toBe(before + 1);
    expect(asked('Parlez-moi des oiseaux du jardin')).toBe(1);
  });

  it('prefetchTurn embeds an interim transcript ahead; the same final transcript asks for nothing more', async () => {
    rt.prefetchTurn(senior, 'Que faisiez-vous le dimanche autrefois ?');
    await expect.poll(() => asked('Que faisiez-vous le dimanche autrefois ?')).toBe(1);
    expect(await turn('Que faisiez-vous le dimanche autrefois ?')).toMatchObject({ flux: 'agent' });
    expect(asked('Que faisiez-vous le dimanche autrefois ?')).toBe(1);
  });

  it('prefetchTurn swallows bad input and never throws', () => {
    expect(() => rt.prefetchTurn('not-a-uuid', 'Bonjour à vous')).not.toThrow();
    expect(() => rt.prefetchTurn(senior, '')).not.toThrow();
    expect(() => rt.prefetchTurn(senior, 'x'.repeat(10_000))).not.toThrow();
  });

  it('a withdrawn consent takes effect at once: nothing is embedded, not even ahead, and the turn gets the neutral line', async () => {
    rt.prefetchTurn(senior, 'Et votre frère, comment va-t-il ?');
    await expect.poll(() => asked('Et votre frère, comment va-t-il ?')).toBe(1);
    expect((await consent('DELETE')).status).toBe(200);
    // Prefetched before the withdrawal: the turn still hears the neutral line, memory untouched.
    expect(await turn('Et votre frère, comment va-t-il ?')).toMatchObject({ flux: 'neutral' });
    rt.prefetchTurn(senior, 'Quel jour sommes-nous ?');
    expect(await turn('Quel jour sommes-nous ?')).toMatchObject({ flux: 'neutral' });
    expect(asked('Quel jour sommes-nous ?')).toBe(0);
    expect((await consent('PUT')).status).toBe(200);
    expect(await turn('Quel jour sommes-nous ?')).toMatchObject({ flux: 'agent' });
    expect(asked('Quel jour sommes-nous ?')).toBe(1);
  });
});

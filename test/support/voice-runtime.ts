import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QUICK_ENDPOINT } from './endpointing.ts';
import { FakeMistral } from './fake-mistral.ts';
import { FakeVoxtral } from './fake-voxtral.ts';
import { startTestRuntime, type TestRuntime } from './runtime.ts';

export interface VoiceRuntime {
  rt: TestRuntime;
  voxtral: FakeVoxtral;
  mistral: FakeMistral;
  /** Stops the runtime, then the fakes it talks to. */
  stop(): Promise<void>;
}

/**
 * The real runtime with voice input, on a PGlite data directory of its own, its model and speech calls
 * going through the real Mistral adapters to the local fakes; quick end-of-turn settings.
 */
export async function startVoiceRuntime(name: string, env: Record<string, string> = {}): Promise<VoiceRuntime> {
  const voxtral = new FakeVoxtral();
  const mistral = await new FakeMistral(voxtral).start();
  const dir = path.join(await mkdtemp(path.join(tmpdir(), `kohami-${name}-`)), 'pglite');
  // These files speak the same few sentences again and again to test the voice path to the model: the strict
  // semantic cache (on by default) would answer the repeats from RAM. test/e2e/semantic-cache.test.ts tests it.
  const rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, PGLITE_DATA_DIR: dir, ...QUICK_ENDPOINT, STT_BUDGET_MS: '1500', SEMANTIC_CACHE_PROFILE: 'off', ...env });
  return {
    rt,
    voxtral,
    mistral,
    async stop() {
      await rt.close();
      await mistral.stop();
      await voxtral.stop();
    },
  };
}

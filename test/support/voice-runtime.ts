import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QUICK_ENDPOINT } from './endpointing.ts';
import { FakeMistral } from './fake-mistral.ts';
import { FakeVoxtral } from './fake-voxtral.ts';
import { startTestRuntime, type TestRuntime } from './runtime.ts';

/**
 * A runtime of its own for a voice test file: PGlite in a fresh directory, the fake Mistral with its
 * fake Voxtral audio endpoints, quick endpointing; `env` adds to (or overrides) those settings.
 */
export async function startVoiceRuntime(name: string, env: Record<string, string> = {}): Promise<{ rt: TestRuntime; voxtral: FakeVoxtral; mistral: FakeMistral; close(): Promise<void> }> {
  const voxtral = new FakeVoxtral();
  const mistral = await new FakeMistral(voxtral).start();
  const dir = path.join(await mkdtemp(path.join(tmpdir(), `kohami-${name}-`)), 'pglite');
  const rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, PGLITE_DATA_DIR: dir, ...QUICK_ENDPOINT, ...env });
  return {
    rt,
    voxtral,
    mistral,
    close: async () => {
      await rt.close();
      await mistral.stop();
      await voxtral.stop();
    },
  };
}

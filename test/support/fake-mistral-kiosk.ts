import { FakeMistral } from './fake-mistral.ts';
import { KioskClient } from './kiosk-client.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from './runtime.ts';

/**
 * The runtime with a key, its Mistral a fresh FakeMistral (set up by `prepare` before the runtime starts),
 * and the demo senior's kiosk connected and started; `close` ends all three.
 */
export async function kioskOnFakeMistral(env: Record<string, string> = {}, prepare: (mistral: FakeMistral) => void = () => {}) {
  const mistral = await new FakeMistral().start();
  prepare(mistral);
  const rt: TestRuntime = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl, ...env });
  const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
  await kiosk.start();
  const close = async () => {
    kiosk.close();
    await rt.close();
    await mistral.stop();
  };
  return { mistral, rt, kiosk, close };
}

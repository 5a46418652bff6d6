import { generateToken } from '../../adapters/postgres/tokens.ts';
import type { ConsentCategory } from '../../machines/memory/memory.port.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { KioskClient } from './kiosk-client.ts';

/** A new senior « Lucie » with `consents` and a kiosk token, whose kiosk has started a live session. */
export async function liveSession(rt: Runtime & { wsUrl: string }, consents: readonly ConsentCategory[] = ['conversation']): Promise<{ senior: string; kiosk: KioskClient }> {
  const senior = await rt.directory.createSenior({ displayName: 'Lucie', preferredName: 'Lucie', onboardingDone: true });
  for (const c of consents) await rt.consents.grant(senior, c);
  const token = generateToken('kiosk');
  await rt.directory.addDevice(senior, token);
  const kiosk = await KioskClient.connect(rt.wsUrl, token);
  await kiosk.start();
  return { senior, kiosk };
}

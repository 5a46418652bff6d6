import { afterAll, beforeAll } from 'vitest';
import { FakeVoxtral } from './fake-voxtral.ts';
import { TcpRelay } from './tcp-relay.ts';

/**
 * A Voxtral fake on its own port behind a TCP relay (the network faults a fake cannot make itself), for a
 * test file: both started before its tests and stopped after. `relay` is there once the file's hooks ran.
 */
export function relayedVoxtral(): { voxtral: FakeVoxtral; relay: () => TcpRelay } {
  const voxtral = new FakeVoxtral();
  let relay: TcpRelay | undefined;
  beforeAll(async () => {
    await voxtral.start();
    relay = await new TcpRelay().start(new URL(voxtral.baseUrl));
  });
  afterAll(async () => {
    await relay?.stop();
    await voxtral.stop();
  });
  return { voxtral, relay: () => relay! };
}

import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { FakeVoxtral } from './fake-voxtral.ts';
import { TcpRelay } from './tcp-relay.ts';

/**
 * A Voxtral fake on its own port behind a TCP relay (the network faults a fake cannot make itself), for a
 * test file: both started before its tests and stopped after, and every socket closed after each test (one
 * still opening would be counted in the next). `relay` is there once the file's hooks ran.
 */
export function relayedVoxtral(): { voxtral: FakeVoxtral; relay: () => TcpRelay } {
  const voxtral = new FakeVoxtral();
  let relay: TcpRelay | undefined;
  beforeAll(async () => {
    await voxtral.start();
    relay = await new TcpRelay().start(new URL(voxtral.baseUrl));
  });
  afterEach(async () => {
    await vi.waitFor(() => expect(voxtral.openSockets).toBe(0), { timeout: 10_000 });
  });
  afterAll(async () => {
    await relay?.stop();
    await voxtral.stop();
  });
  return { voxtral, relay: () => relay! };
}

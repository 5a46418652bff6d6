import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DeadlineError, withDeadline } from '../../machines/session/deadline.ts';

/** A connected pair of sockets in this process: what is written to one is in the kernel's buffer of the other at once. */
async function socketPair(): Promise<{ near: Socket; far: Socket; close: () => void }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const near = connect(port, '127.0.0.1');
  await once(near, 'connect');
  const [far] = await accepted;
  return {
    near,
    far,
    close: () => {
      near.destroy();
      far.destroy();
      server.close();
    },
  };
}

/** The event loop held for `ms`, as a busy machine holds it. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('withDeadline', () => {
  it('rejects with DeadlineError once its budget is spent, and aborts the work’s own signal', async () => {
    let workSignal: AbortSignal | undefined;
    const work = (signal: AbortSignal) => {
      workSignal = signal;
      return new Promise<string>(() => undefined);
    };
    await expect(withDeadline(work, 5, new AbortController().signal)).rejects.toBeInstanceOf(DeadlineError);
    expect(workSignal!.aborted).toBe(true);
  });

  it('an answer already received when a stalled event loop wakes past the budget is taken, not given up for none', async () => {
    const { near, far, close } = await socketPair();
    cleanups.push(close);
    const answered = withDeadline(async () => String((await once(near, 'data'))[0]), 20, new AbortController().signal);
    // The answer reaches the kernel's buffer at once; the loop is held past the budget before reading it.
    far.write('bonjour');
    stall(100);
    await expect(answered).resolves.toBe('bonjour');
  });

  it('the caller’s signal still stops it at once', async () => {
    const caller = new AbortController();
    const pending = withDeadline(() => new Promise<string>(() => undefined), 60_000, caller.signal);
    caller.abort();
    await expect(pending).rejects.toThrow('aborted');
  });
});

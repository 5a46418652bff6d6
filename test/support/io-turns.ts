/**
 * Lets sockets and promises run until `check` holds, for at most `ms` of wall-clock time (read on
 * `performance.now()`, which the tests that use this do not fake). Not vi.waitFor nor expect.poll:
 * under fake timers they advance the clock while they poll, and these tests move it themselves.
 */
export async function untilIo(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A few turns of the event loop with no clock moved: what a request sent by mistake would need to arrive. */
export async function ioTurns(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

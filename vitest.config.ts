import { defineConfig } from 'vitest/config';

/** A test's time: PGlite takes seconds to boot, and each file opens one database and shares it. */
const TEST_TIMEOUT_MS = 30_000;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Every message to a Mistral fake is checked against the SDK's schemas: a test that breaks the contract fails.
    setupFiles: ['test/support/contract-setup.ts'],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: 60_000,
    // expect.poll waits on state, not on the machine: by default up to half a test's time (vitest's
    // own default, 1 s, timed a loaded machine), so that a failure shows the poll's last value rather
    // than the test's timeout. Bounds the runtime promises are asserted on a simulated clock.
    expect: { poll: { timeout: TEST_TIMEOUT_MS / 2 } },
    pool: 'forks',
    maxWorkers: 2,
  },
});

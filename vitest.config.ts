import { defineConfig } from 'vitest/config';
import { startupAllowanceMs } from './test/support/manifests.ts';
import { TEST_NODE_FLAGS } from './test/support/node-flags.ts';
import { ALL_TESTS, EXTERNAL_TESTS } from './test/support/test-projects.ts';

/** A test's time: PGlite takes seconds to boot, and each file opens one database and shares it. */
const TEST_TIMEOUT_MS = 30_000;

export default defineConfig({
  test: {
    // Once per run, before any file: the migrated database image every test database starts from.
    globalSetup: ['test/support/global-setup.ts'],
    // Every message to a Mistral fake is checked against the SDK's schemas: a test that breaks the contract fails.
    setupFiles: ['test/support/contract-setup.ts'],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: 60_000,
    // expect.poll waits on state, not on the machine: by default up to half a test's time (vitest's
    // own default, 1 s, timed a loaded machine), so that a failure shows the poll's last value rather
    // than the test's timeout. Bounds the runtime promises are asserted on a simulated clock.
    expect: { poll: { timeout: TEST_TIMEOUT_MS / 2 } },
    pool: 'forks',
    // The workers' V8 flags (test/support/node-flags.ts says why).
    execArgv: [...TEST_NODE_FLAGS],
    // Three files on the 2-core machines it runs on: a file waits much of its time (speech streamed at its
    // pace, Chromium's audio clock, a child's start), and with one file per core the machine sat idle a
    // fifth of the run; four, quicker alone, fail on a loaded machine (docs/testing.md « How many at a time »).
    maxWorkers: 3,
    // Both inherit everything above (test/support/test-projects.ts says which file goes where).
    projects: [
      // One worker process runs its files one after another, keeping what they imported (the runtime's
      // whole graph, seconds a file): a third less CPU. Each file still closes what it opened.
      { extends: true, test: { name: 'in-process', include: ALL_TESTS, exclude: EXTERNAL_TESTS, isolate: false } },
      // The same for the files that drive a child process or a browser. A test or hook there may wait for
      // a runtime process's start first: the start the deployment allows on top.
      { extends: true, test: { name: 'external', include: EXTERNAL_TESTS, isolate: false, testTimeout: startupAllowanceMs() + TEST_TIMEOUT_MS, hookTimeout: startupAllowanceMs() + 60_000 } },
    ],
  },
});

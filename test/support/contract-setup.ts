import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { beginContractWindow, endContractWindow, formatViolation, takeStrayViolations } from './contract-violations.ts';

/**
 * Every test file's setup (vitest.config.ts `setupFiles`): a test during which a fake saw a message off
 * Mistral's contract, or answered off it, fails — unless it called `expectContractViolations()`. Breaks
 * outside any test (a file's hooks, traffic after a test ended) fail the file.
 */
beforeAll(() => beginContractWindow(null));

beforeEach((context) => beginContractWindow(context.task.name));

afterEach(() => {
  const undeclared = endContractWindow();
  if (undeclared.length > 0) throw new Error(`off Mistral's contract (test/support/mistral-contract.ts):\n${undeclared.map(formatViolation).join('\n')}`);
});

afterAll(() => {
  const stray = takeStrayViolations();
  if (stray.length > 0) {
    throw new Error(`off Mistral's contract outside a test's own time:\n${stray.map((s) => `${s.test === null ? '(no test)' : `after "${s.test}"`}: ${formatViolation(s.violation)}`).join('\n')}`);
  }
});

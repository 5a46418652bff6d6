import type { WireIssue } from './zod-wire-walker.ts';

/**
 * The breaks of Mistral's contract the fakes saw (test/support/mistral-contract.ts checks them), kept for
 * the whole process: contract-setup.ts fails the test they happened in, a benchmark's fakes process
 * listens for them. Kept apart from the checks so that every test file's setup loads no SDK schema.
 */
export interface ContractViolation extends WireIssue {
  /** Who broke it: the runtime's `request` to Mistral, or a fake's `answer` to the runtime. */
  side: 'request' | 'answer';
  /** The endpoint and message, e.g. `POST /v1/chat/completions` or `realtime session.update`. */
  endpoint: string;
}

interface TestWindow {
  test: string | null;
  /** Still the test's: its afterEach has not run. */
  open: boolean;
  /** The breaks the test declared it makes on purpose (any of these predicates), or null. */
  expected: Array<(violation: ContractViolation) => boolean> | null;
  seen: ContractViolation[];
}

interface ContractState {
  window: TestWindow;
  /** Breaks no running test declared (between tests, after its end, in a file's hooks): the file fails. */
  stray: Array<{ test: string | null; violation: ContractViolation }>;
  listeners: Set<(violation: ContractViolation) => void>;
}

const STATE = Symbol.for('kohami.mistral-contract');
/** On globalThis: one record per process, however many copies of this module a test runner loads. */
const state: ContractState = ((globalThis as { [STATE]?: ContractState })[STATE] ??= {
  window: { test: null, open: false, expected: null, seen: [] },
  stray: [],
  listeners: new Set(),
});

export function recordContractViolation(violation: ContractViolation): void {
  const window = state.window;
  if (window.expected?.some((declared) => declared(violation)) || (window.open && window.test !== null)) window.seen.push(violation);
  else state.stray.push({ test: window.test, violation });
  for (const listener of state.listeners) listener(violation);
}

/**
 * Declares that the running test breaks the contract on purpose: its breaks (those `which` picks, by
 * default all) are not a failure. Returns every break seen during the test, a list that grows as they
 * come (assert on it after the traffic).
 */
export function expectContractViolations(which: (violation: ContractViolation) => boolean = () => true): readonly ContractViolation[] {
  (state.window.expected ??= []).push(which);
  return state.window.seen;
}

/** Calls `listener` on every break from now on (a benchmark's fakes process stops on the first). */
export function onContractViolation(listener: (violation: ContractViolation) => void): () => void {
  state.listeners.add(listener);
  return () => state.listeners.delete(listener);
}

/** A test starts (null: a test file starts, and breaks before its first test are the file's). */
export function beginContractWindow(test: string | null): void {
  state.window = { test, open: test !== null, expected: null, seen: [] };
}

/** The test's breaks it did not declare; its later breaks go to the stray ones (unless declared). */
export function endContractWindow(): ContractViolation[] {
  const window = state.window;
  window.open = false;
  return window.seen.filter((violation) => !window.expected?.some((declared) => declared(violation)));
}

export function takeStrayViolations(): Array<{ test: string | null; violation: ContractViolation }> {
  return state.stray.splice(0);
}

export function formatViolation(v: ContractViolation): string {
  const who = v.side === 'request' ? 'the runtime sent Mistral' : 'a fake answered';
  const input = v.input === undefined ? '' : ` (got ${truncate(JSON.stringify(v.input) ?? String(v.input))})`;
  return `${who} off-contract on ${v.endpoint}: ${v.path.join('.') || '(whole message)'}: ${v.message}${input}`;
}

const truncate = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}...` : text);


/** A benchmark's fakes process: the first break is printed and ends the process (its parent stops with it, bench/support/child.ts). */
export function exitOnContractViolation(): void {
  onContractViolation((violation) => {
    process.stderr.write(`${formatViolation(violation)}\n`);
    process.exit(CONTRACT_BROKEN_EXIT_CODE);
  });
}

export const CONTRACT_BROKEN_EXIT_CODE = 3;

import type { ChildProcess } from 'node:child_process';
import { CONTRACT_BROKEN_EXIT_CODE } from '../../test/support/contract-violations.ts';

/** Asks a benchmark's child process for `type` and resolves with its answer of that type ('ready' is only awaited). */
export function ask<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (msg: { type: string }) => {
      if (msg.type !== type) return;
      child.off('message', onMessage);
      resolve(msg as T);
    };
    child.on('message', onMessage);
    if (type !== 'ready') child.send({ type });
  });
}

/**
 * A benchmark's fakes process that ends by itself failed — on the first message off Mistral's contract it
 * prints it and exits (exitOnContractViolation): the benchmark stops with it rather than measure a dead service.
 */
export function stopWithFakes(fakes: ChildProcess): void {
  fakes.once('exit', (code) => {
    if (!code) return;
    console.error(`bench: the fakes process exited with code ${code}${code === CONTRACT_BROKEN_EXIT_CODE ? " (a message off Mistral's contract, above)" : ''}`);
    process.exit(code);
  });
}

import type { ChildProcess } from 'node:child_process';

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

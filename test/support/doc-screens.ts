import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Where a file's screenshots of a page go. The docs show some (docs/screens/), but a test run writes
 * them to a directory of its own, removed with `remove()`, never into the checkout: they change with the
 * day (a mood chart's dates), and a run that rewrote tracked files raced `commands.test.ts`' « wrote
 * nothing in the checkout ». `UPDATE_DOC_SCREENS=1 npx vitest run FILE` writes them into docs/screens/.
 */
export async function docScreens(): Promise<{ file(name: string): string; remove(): Promise<void> }> {
  if (process.env.UPDATE_DOC_SCREENS === '1') return { file: (name) => path.join('docs/screens', name), remove: async () => {} };
  const dir = await mkdtemp(path.join(tmpdir(), 'kohami-screens-'));
  return { file: (name) => path.join(dir, name), remove: () => rm(dir, { recursive: true, force: true }) };
}

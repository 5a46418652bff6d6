import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { writeMigratedImage } from './database-image.ts';

/**
 * Once per test run, before any test file: the migrated database image every test database starts
 * from, and the directory of the Node compile cache the Node processes the tests start share
 * (`childEnv`). Both are the run's own, in a private directory removed after it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kohami-test-run-'));
  const file = path.join(dir, 'migrated.tar');
  await writeMigratedImage(file);
  project.provide('databaseImage', file);
  project.provide('compileCache', path.join(dir, 'compile-cache'));
  return () => rm(dir, { recursive: true, force: true });
}

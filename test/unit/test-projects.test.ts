import { globSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.ts';
import { ALL_TESTS, EXTERNAL_MARK, EXTERNAL_TESTS } from '../support/test-projects.ts';

const root = new URL('../../', import.meta.url);
const files = globSync(ALL_TESTS, { cwd: root }).sort();

describe('the vitest projects', () => {
  it('put every file that drives Chromium, a child process or nginx in `external`, and no other', () => {
    const marked = files.filter((file) => EXTERNAL_MARK.test(readFileSync(new URL(file, root), 'utf8')));
    // The search proves it can find: the suite has browser, process and nginx tests.
    expect(marked).toEqual(expect.arrayContaining(['test/e2e/ops-console.test.ts', 'test/e2e/process.test.ts', 'test/e2e/scale-out.test.ts']));
    expect([...EXTERNAL_TESTS].sort()).toEqual(marked);
  });

  it('run every test file, each in one project, both with the suite-wide settings', () => {
    const projects = config.test?.projects as Array<{ extends: boolean; test: { name: string; include: string[]; exclude?: string[] } }>;
    expect(projects.map((p) => [p.test.name, p.extends])).toEqual([
      ['in-process', true],
      ['external', true],
    ]);
    const [inProcess, external] = projects;
    expect(inProcess!.test.include).toEqual(ALL_TESTS);
    expect(inProcess!.test.exclude).toEqual(EXTERNAL_TESTS);
    expect(external!.test.include).toEqual(EXTERNAL_TESTS);
    expect(EXTERNAL_TESTS.filter((file) => !files.includes(file))).toEqual([]);
  });
});

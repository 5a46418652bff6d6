import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoFile } from '../support/manifests.ts';
import { childEnv } from '../support/child-env.ts';

/**
 * Every command of package.json and of the workspaces' package.json — the runtime, its command-line
 * tools, the benches, the build scripts and the shell scripts npm runs before the tests — answers
 * `--help` with its usage and runs nothing: no database opened or created, no file written, no
 * package installed, no server left listening (the process exits by itself). And
 * `npm run test:faults -- NAME` runs the named fault tests only. The scripts that only call a tool
 * (`vitest`, `eslint`, `tsc` for typecheck) are left out: `--help` reaches that tool, which prints its
 * own usage — and npm appends it to the last command of a chain only (`tsc -p . && tsc … --help`).
 */

const REPO = path.resolve(new URL('../../', import.meta.url).pathname);
type Scripts = Record<string, string>;
const manifest = (file: string) => JSON.parse(repoFile(file)) as { name: string; scripts?: Scripts };
/** The root's scripts, then each workspace's, named as npm runs them (`build -w @kohami/kiosk-client`), with the folder npm runs them in. */
const SCRIPTS: Array<{ name: string; command: string; cwd: string }> = [
  ...Object.entries(manifest('package.json').scripts!).map(([name, command]) => ({ name, command, cwd: REPO })),
  ...readdirSync(path.join(REPO, 'packages')).flatMap((folder) => {
    const { name: workspace, scripts = {} } = manifest(`packages/${folder}/package.json`);
    return Object.entries(scripts).map(([name, command]) => ({ name: `${name} -w ${workspace}`, command, cwd: path.join(REPO, 'packages', folder) }));
  }),
];
/** The scripts that run a file of this project with node: `node [flags] FILE [args]`, as npm runs them. */
const COMMANDS = SCRIPTS.map(({ name, command, cwd }) => [name, /^(?:exec )?node (.+)$/.exec(command)?.[1]?.split(' '), cwd] as const).filter(
  (entry): entry is readonly [string, string[], string] => entry[1] !== undefined,
);
/** The shell scripts of this project the scripts run, `bash FILE` each (pretest chains two). */
const SHELL_SCRIPTS = [...new Set(SCRIPTS.flatMap(({ command }) => [...command.matchAll(/(?:^|&& )bash (\S+)/g)].map((m) => m[1]!)))];
/** A generous bound for a process that only prints its usage, on a loaded machine. */
const HELP_MS = 60_000;

let dir: string;
/** apt-get, apt-cache and sudo ahead of the system's on PATH: each leaves a file in `dir` if a script runs it. */
let tools: string;
let before: { status: string; newest: number };
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-help-'));
  tools = await mkdtemp(path.join(tmpdir(), 'kohami-help-tools-'));
  for (const tool of ['apt-get', 'apt-cache', 'sudo']) await writeFile(path.join(tools, tool), `#!/bin/sh\ntouch '${dir}/ran-${tool}'\n`, { mode: 0o755 });
  before = repoState();
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  if (tools) await rm(tools, { recursive: true, force: true });
});

/** `git status` (ignored files included) and the newest modification time among the tracked files: a command that wrote one shows. */
function repoState(): { status: string; newest: number } {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: REPO, encoding: 'utf8' }).stdout;
  const newest = Math.max(...git('ls-files').split('\n').filter((f) => f && existsSync(path.join(REPO, f))).map((f) => statSync(path.join(REPO, f)).mtimeMs));
  // --ignored: an output folder git ignores (a build's dist/) shows too.
  return { status: git('status', '--porcelain', '--ignored'), newest };
}

describe('--help', () => {
  it('covers the tools, the benches and the scripts', () => {
    const names = COMMANDS.map(([name]) => name);
    for (const name of ['start', 'kiosk', 'cli', 'dream', 'cache:calibrate', 'cache:evaluate', 'recall:calibrate', 'memory:reembed', 'dev:inspect', 'mistral:check', 'test:faults', 'bench:turns', 'protocol:schema', 'build -w @kohami/kiosk-client']) expect(names).toContain(name);
    expect(SHELL_SCRIPTS).toEqual(['scripts/ensure-chromium.sh', 'scripts/install-pico.sh']);
  });

  it.each(COMMANDS)('npm run %s -- --help: its usage, exit 0, nothing run', (name, args, cwd) => {
    const data = path.join(dir, name.replace(/[: @/]/g, '-'));
    const run = spawnSync(process.execPath, [...args, '--help'], {
      cwd,
      encoding: 'utf8',
      timeout: HELP_MS,
      // Where a command would open its database, a relay it would listen on: neither may appear.
      env: childEnv({ PGLITE_DATA_DIR: data, INSPECT_PORT: '0', KOHAMI_ENV: 'development' }),
    });
    expect(run.stderr).toBe('');
    expect(run.status, `${name} exits by itself, 0`).toBe(0);
    expect(run.stdout).toContain(name === 'start' ? 'npm start' : `npm run ${name}`);
    expect(existsSync(data), `${name} created no data directory`).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  }, HELP_MS * 2);

  it('no node script reads --help from process.argv by hand: exitOnHelp (runtime/cli/usage.ts) or its parseArgs does', () => {
    const files = COMMANDS.map(([, args, cwd]) => path.relative(REPO, path.join(cwd, args.find((a) => a.endsWith('.ts'))!)));
    expect(files.filter((file) => /argv\.includes\(['"](--help|-h)['"]\)/.test(readFileSync(path.join(REPO, file), 'utf8')))).toEqual([]);
  });

  it.each(SHELL_SCRIPTS)('bash %s --help: its usage, exit 0, nothing installed', (script) => {
    const run = spawnSync('bash', [script, '--help'], { cwd: REPO, encoding: 'utf8', timeout: HELP_MS, env: { PATH: `${tools}:${process.env.PATH ?? ''}` } });
    expect(run.stderr).toBe('');
    expect(run.status, `${script} exits 0`).toBe(0);
    expect(run.stdout).toContain(`usage: bash ${script}`);
    expect(readdirSync(dir), `${script} ran no package tool`).toEqual([]);
  }, HELP_MS * 2);

  it('wrote nothing in the checkout', () => {
    expect(repoState()).toEqual(before);
  });
});

describe('npm run test:faults -- NAME', () => {
  it('runs only the fault test files whose name contains NAME', async () => {
    const report = path.join(dir, 'faults.json');
    const [script] = COMMANDS.find(([name]) => name === 'test:faults')![1];
    // A test name nothing has: vitest collects the files it was given and runs none of their tests.
    const run = spawnSync(process.execPath, [script!, 'erasure', '--testNamePattern=^no test has this name$', '--reporter=json', `--outputFile=${report}`], { cwd: REPO, encoding: 'utf8', timeout: 180_000 });
    expect(run.status, run.stderr).toBe(0);
    const files = (JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ name: string }> }).testResults.map((r) => path.relative(REPO, r.name)).sort();
    expect(files).toEqual(readdirSync(path.join(REPO, 'test/faults')).filter((f) => f.includes('erasure')).map((f) => `test/faults/${f}`).sort());
    expect(files.length).toBeGreaterThan(0);
    await rm(report);
  }, 240_000);

  it('names the files when NAME matches none, and exits 2 without running vitest', () => {
    const [script] = COMMANDS.find(([name]) => name === 'test:faults')![1];
    const run = spawnSync(process.execPath, [script!, 'no-such-fault'], { cwd: REPO, encoding: 'utf8', timeout: HELP_MS });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('no fault test file matches no-such-fault');
    expect(run.stderr).toContain('erasure-race.test.ts');
  }, HELP_MS * 2);
});

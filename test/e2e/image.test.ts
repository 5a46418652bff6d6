import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImageLayout, dockerIgnored, type ImageLayout } from '../support/image-layout.ts';
import { spawnRuntime, type RuntimeProcess } from '../support/runtime-process.ts';

/**
 * The container image as it would start, without a container engine: its file layout built from the
 * Dockerfile's own lines (`npm ci --omit=dev` and exactly its COPY lines, .dockerignore applied) in a
 * temporary folder, and the runtime started from there on the image's ENV and CMD — so a file the
 * runtime reads that the image does not hold fails here as it would in the container.
 */

/** A first start on a new embedded database runs initdb and every migration: a minute on a loaded machine. */
const START_MS = 180_000;

let dir: string;
let layout: ImageLayout;
let runtime: RuntimeProcess | null = null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-image-'));
  layout = buildImageLayout(dir);
}, 300_000);
afterAll(async () => {
  await runtime?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The image's ENV with its absolute paths under the layout's root, on a free port; nothing from this shell. */
const imageEnv = () => ({
  ...layout.env,
  PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
  PGLITE_DATA_DIR: path.join(layout.root, layout.env.PGLITE_DATA_DIR!),
  PORT: '0',
});

describe('the image’s file layout', () => {
  it('starts the runtime on the image’s CMD and ENV, to /health and the kiosk page with its client', async () => {
    expect(layout.cmd[0]).toBe('node');
    runtime = await spawnRuntime(layout.cmd.slice(1), { cwd: layout.workdir, env: imageEnv(), startMs: START_MS });
    expect(runtime.output()).toContain('(production)');
    // The strict profile's figures ship in the image (adapters/): the default semantic cache is on.
    expect(runtime.output()).toMatch(/semantic cache: {3}strict: the same question only/);
    const get = (pathname: string) => fetch(`${runtime!.url}${pathname}`);
    expect((await get('/health')).status).toBe(200);
    expect((await get('/kiosk')).status).toBe(200);
    const client = await get('/kiosk/client/index.ts');
    expect(client.status).toBe(200);
    expect(await client.text()).toContain('KioskClient');
    // The embedded database went where the image's volume is mounted.
    expect(existsSync(path.join(layout.root, layout.env.PGLITE_DATA_DIR!))).toBe(true);
  }, START_MS * 2);

  it('holds the command-line tools’ imports: `npm run kiosk`’s client resolves in it', () => {
    const help = spawnSync(process.execPath, ['runtime/cli/kiosk.ts', '--help'], { cwd: layout.workdir, env: imageEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(help.stderr).toBe('');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('npm run kiosk');
  });

  it('holds no tests, dev tools or build context it does not need', () => {
    for (const absent of ['test', 'bench', 'docs', 'packages/kiosk-client/test', 'node_modules/vitest', 'node_modules/typescript', '.git']) {
      expect(existsSync(path.join(layout.workdir, absent)), absent).toBe(false);
    }
  });
});

describe('.dockerignore as the engine reads it', () => {
  it('leaves out a path when it or a folder above it matches, `*` within one segment', () => {
    const ignored = dockerIgnored(['.git', '*.log', 'packages/*/test', '.env.*']);
    expect(ignored('.git/HEAD')).toBe(true);
    expect(ignored('npm.log')).toBe(true);
    expect(ignored('packages/kiosk-client/test/a.test.ts')).toBe(true);
    expect(ignored('.env.local')).toBe(true);
    expect(ignored('packages/kiosk-client/src/index.ts')).toBe(false);
    expect(ignored('runtime/logs/a.log')).toBe(false);
    expect(ignored('.env')).toBe(false);
  });
});

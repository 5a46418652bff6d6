import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * "Publishable", proved: the package is built as it would be published into a temporary
 * node_modules, then used from there by plain Node with type stripping off (as an installed
 * package is: Node never strips types under node_modules) and by a TypeScript consumer through the
 * built .d.ts files alone.
 */
const run = promisify(execFile);
const PACKAGE = path.resolve(import.meta.dirname, '..');
const BUILD_MS = 60_000;
let dir: string;
let installed: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kohami-kiosk-client-build-'));
  installed = path.join(dir, 'node_modules', '@kohami', 'kiosk-client');
  await mkdir(path.dirname(installed), { recursive: true });
  await run(process.execPath, [path.join(PACKAGE, 'scripts', 'build.ts'), '--out', installed]);
}, BUILD_MS);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the built package', () => {
  it('ships JavaScript and declarations only, with exports that point at them', async () => {
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')) as { exports: Record<string, unknown>; scripts?: unknown };
    expect(manifest.exports['.']).toEqual({ types: './index.d.ts', default: './index.js' });
    expect(manifest.exports['./node']).toEqual({ types: './node.d.ts', default: './node.js' });
    expect(manifest.scripts).toBeUndefined();
    expect(await readFile(path.join(installed, 'client.js'), 'utf8')).not.toMatch(/from '\.\/[^']+\.ts'/);
  });

  it('ships the browser entry with its capture worklet and the resampler the worklet imports', async () => {
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(manifest.exports['./browser']).toEqual({ types: './browser.d.ts', default: './browser.js' });
    const worklet = await readFile(path.join(installed, 'browser', 'capture-worklet.js'), 'utf8');
    expect(worklet).toMatch(/from ['"]\.\/sinc-resampler\.js['"]/);
    expect(worklet).toMatch(/from ['"]\.\/capture-frames\.js['"]/);
    expect(await readFile(path.join(installed, 'browser', 'sinc-resampler.js'), 'utf8')).toBe(await readFile(path.join(PACKAGE, '..', '..', 'machines', 'voice', 'sinc-resampler.js'), 'utf8'));
    // The worklet's URL follows the build's extension.
    expect(await readFile(path.join(installed, 'browser', 'microphone.js'), 'utf8')).toContain("'./capture-worklet.js'");
  });

  it('runs from node_modules under plain Node, no type stripping', async () => {
    const script = path.join(dir, 'consumer.mjs');
    await writeFile(
      script,
      `import { KioskClient, KioskError, encodeAudioFrame, decodeAudioFrame, parseServerFrame } from '@kohami/kiosk-client';
import { pcmFrames, wsSocket, headerSocket } from '@kohami/kiosk-client/node';
const decoded = decodeAudioFrame(encodeAudioFrame('v1', 480, new Uint8Array([1, 0])));
const client = new KioskClient({ url: 'ws://127.0.0.1:9/v1/kiosk', token: 't', reconnect: false, connectTimeoutMs: 5000 });
const failed = await client.connect().catch((e) => e);
console.log(JSON.stringify({
  decoded: decoded.ok && [decoded.frame.turnId, decoded.frame.sampleOffset],
  bad: parseServerFrame('<html>').error.code,
  frames: [...pcmFrames(new Int16Array(500), 16000)].length,
  sockets: [typeof wsSocket, typeof headerSocket],
  failed: [failed instanceof KioskError, failed.code],
}));
`,
    );
    const { stdout } = await run(process.execPath, ['--no-experimental-strip-types', script], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual({ decoded: ['v1', 480], bad: 'bad_frame', frames: 2, sockets: ['function', 'function'], failed: [true, 'connect_failed'] });
  }, BUILD_MS);

  it('publishes a README whose every link works from the registry: absolute, or a file the package ships', async () => {
    const readme = await readFile(path.join(installed, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    const broken = [];
    for (const target of targets) {
      if (/^https?:\/\//.test(target) || target.startsWith('#')) continue;
      const file = path.resolve(installed, target.split('#')[0]!);
      if (!file.startsWith(installed + path.sep) || !(await readFile(file).then(() => true, () => false))) broken.push(target);
    }
    expect(broken).toEqual([]);
    // What it names instead of linking out ships, and resolves by the name the README gives.
    const script = path.join(dir, 'schema.mjs');
    await writeFile(script, `import schema from '@kohami/kiosk-client/protocol.schema.json' with { type: 'json' };\nconsole.log(Object.keys(schema.$defs).includes('session.start'));\n`);
    expect((await run(process.execPath, [script], { cwd: dir })).stdout.trim()).toBe('true');
  });

  it('on a Node with no global WebSocket, says which Node it needs (unsupported_platform), whatever the socket', async () => {
    const script = path.join(dir, 'old-node.mjs');
    await writeFile(
      script,
      `import { KioskClient } from '@kohami/kiosk-client';
import { headerSocket } from '@kohami/kiosk-client/node';
const failures = [];
for (const socket of [undefined, headerSocket]) {
  const err = await new KioskClient({ url: 'ws://127.0.0.1:9/v1/kiosk', token: 't', socket }).connect().catch((e) => e);
  failures.push([err.code, err.message]);
}
console.log(JSON.stringify({ node: process.versions.node, failures }));
`,
    );
    // Node 24 without its WebSocket stands for Node 20, which has none.
    const { stdout } = await run(process.execPath, ['--no-experimental-websocket', script], { cwd: dir });
    const { node, failures } = JSON.parse(stdout) as { node: string; failures: Array<[string, string]> };
    for (const [code, message] of failures) {
      expect(code).toBe('unsupported_platform');
      expect(message).toContain(`Node ${node} has no global WebSocket: @kohami/kiosk-client needs Node 24.11 or later`);
    }
  }, BUILD_MS);

  it('type-checks a TypeScript consumer through the built declarations', async () => {
    await writeFile(
      path.join(dir, 'consumer.ts'),
      `import { KioskClient, type ReplyDoneFrame } from '@kohami/kiosk-client';
import { headerSocket } from '@kohami/kiosk-client/node';
const client = new KioskClient({ url: 'ws://kiosk', token: 't', socket: headerSocket });
client.on('reply.done', (frame: ReplyDoneFrame) => frame.flux satisfies 'cache' | 'recall' | 'agent' | 'semantic_cache' | 'sos' | 'neutral' | 'checkin');
client.on('audio', (frame) => frame.payload satisfies Uint8Array);
// @ts-expect-error: not an event
client.on('reply.dune', () => {});
`,
    );
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, types: [] }, files: ['consumer.ts'] }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', dir]).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(result).toBe('');
  }, BUILD_MS);
});

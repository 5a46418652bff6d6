/**
 * `npm run build -w @kohami/kiosk-client [-- --out DIR]`: the package as it is published — plain
 * JavaScript and .d.ts files compiled by tsc (relative `.ts` imports rewritten to `.js`), with a
 * package.json whose exports point at them, and the README. In the repository the package runs from
 * its TypeScript sources (Node strips the types); Node refuses to strip them under node_modules, so
 * what is installed from the registry must be this. Publish with `npm publish DIR` (default dist/).
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { docComment, exitOnHelp } from '../../../runtime/cli/usage.ts';

exitOnHelp(() => docComment(import.meta.url));

const here = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(here, 'dist') } } });
const out = path.resolve(values.out);

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(here, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

const manifest = JSON.parse(await readFile(path.join(here, 'package.json'), 'utf8')) as Record<string, unknown> & { exports: Record<string, string> };
const exists = (file: string) => stat(path.join(out, file)).then(() => true, () => false);
const exports: Record<string, { types: string; default: string } | string> = {};
for (const [entry, source] of Object.entries(manifest.exports)) {
  const js = source.replace(/^\.\/src\//, './').replace(/\.ts$/, '.js');
  // An entry whose source is not in this checkout (yet) is left out rather than published broken.
  if (await exists(js)) exports[entry] = { types: js.replace(/\.js$/, '.d.ts'), default: js };
}
// The README names the protocol's JSON Schema rather than linking out of the package (a link that breaks once published): it ships.
exports['./protocol.schema.json'] = './protocol.schema.json';
const { scripts: _scripts, files: _files, ...rest } = manifest;
await writeFile(path.join(out, 'package.json'), `${JSON.stringify({ ...rest, exports }, null, 2)}\n`);
await copyFile(path.join(here, 'README.md'), path.join(out, 'README.md'));
await copyFile(path.join(here, '..', '..', 'docs', 'protocol.schema.json'), path.join(out, 'protocol.schema.json'));
// The capture worklet imports the runtime's resampler from next to itself (plain JavaScript, the same file the server runs).
if (await exists('browser/capture-worklet.js')) await copyFile(path.join(here, '..', '..', 'machines', 'voice', 'sinc-resampler.js'), path.join(out, 'browser', 'sinc-resampler.js'));
process.stdout.write(`built ${Object.keys(exports).join(', ')} into ${out}\n`);

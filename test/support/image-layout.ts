import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dockerfileStages, envPairs, repoFile, type Instruction } from './manifests.ts';

const STAGE_PREFIX = 'kohami-image-stage-';
const REPO = path.resolve(new URL('../../', import.meta.url).pathname);

/** The image's final stage as files on this machine: where its WORKDIR lies, its ENV and its CMD. */
export interface ImageLayout {
  /** The directory standing for the container's `/`. */
  root: string;
  /** The final stage's WORKDIR, under `root`. */
  workdir: string;
  env: Record<string, string>;
  cmd: string[];
}

/**
 * .dockerignore's patterns as the engine applies them to the build context: a path is left out when it,
 * or a folder above it, matches a pattern (`*` within one path segment). Negations are not used here.
 */
export function dockerIgnored(patterns: string[]): (relative: string) => boolean {
  const regexes = patterns.map((p) => new RegExp(`^${p.replace(/^\/+|\/+$/g, '').split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`));
  return (relative) => {
    const parts = relative.split('/');
    return parts.some((_, i) => regexes.some((r) => r.test(parts.slice(0, i + 1).join('/'))));
  };
}

/**
 * Builds the image's file layout without a container engine: each stage's COPY lines run against the
 * build context (less .dockerignore) or an earlier stage's files, its RUN steps as the lines say. A RUN
 * this does not know fails the build, so the Dockerfile cannot grow a step the layout silently skips.
 * The dependencies stage is kept between runs under the hash of its instructions and the files it
 * copies — what the engine's layer cache does — because `npm ci --omit=dev` takes half a minute.
 */
export function buildImageLayout(into: string): ImageLayout {
  const ignored = dockerIgnored(
    repoFile('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')),
  );
  const stages = dockerfileStages(repoFile('Dockerfile'));
  const roots = new Map<string, string>();
  let layout: ImageLayout | null = null;
  stages.forEach((stage, index) => {
    const name = /\sAS\s+(\S+)/i.exec(stage[0]!.args)?.[1] ?? String(index);
    const final = index === stages.length - 1;
    const root = final ? path.join(into, 'image') : cachedStageRoot(stage, ignored);
    roots.set(name, root);
    if (existsSync(path.join(root, '.complete'))) return;
    const building = final ? root : `${root}.${process.pid}`;
    rmSync(building, { recursive: true, force: true });
    const state = runStage(stage, building, { ignored, roots });
    if (final) layout = state;
    else {
      writeFileSync(path.join(building, '.complete'), '');
      // Atomic: another run sees the whole stage or none of it.
      if (!existsSync(root)) renameSync(building, root);
      else rmSync(building, { recursive: true, force: true });
      pruneStages(root);
    }
  });
  return layout!;
}

function runStage(stage: Instruction[], root: string, ctx: { ignored: (relative: string) => boolean; roots: Map<string, string> }): ImageLayout {
  const state: ImageLayout = { root, workdir: root, env: {}, cmd: [] };
  mkdirSync(root, { recursive: true });
  const inImage = (p: string) => (path.isAbsolute(p) ? path.join(root, p) : path.join(state.workdir, p));
  for (const { keyword, args } of stage.slice(1)) {
    if (keyword === 'WORKDIR') {
      state.workdir = inImage(args);
      mkdirSync(state.workdir, { recursive: true });
    } else if (keyword === 'ENV') Object.assign(state.env, envPairs(args));
    else if (keyword === 'COPY') copy(args, inImage, ctx);
    else if (keyword === 'RUN') run(args, state.workdir, inImage);
    else if (keyword === 'CMD') state.cmd = JSON.parse(args) as string[];
    else if (!['USER', 'EXPOSE', 'HEALTHCHECK'].includes(keyword)) throw new Error(`Dockerfile: ${keyword} is not reproduced by the image layout`);
  }
  return state;
}

/** `COPY [--from=STAGE] SRC… DEST`: a folder's contents into DEST, files into DEST/ when it ends with `/` or there are several. */
function copy(args: string, inImage: (p: string) => string, ctx: { ignored: (relative: string) => boolean; roots: Map<string, string> }): void {
  const words = args.split(/\s+/);
  const from = words[0]!.startsWith('--from=') ? words.shift()!.slice('--from='.length) : null;
  const dest = words.pop()!;
  const intoFolder = dest.endsWith('/') || words.length > 1;
  for (const source of words) {
    const src = from === null ? path.join(REPO, source) : path.join(ctx.roots.get(from) ?? fail(`COPY --from=${from}: no such stage`), source);
    const target = intoFolder ? path.join(inImage(dest), path.basename(source)) : inImage(dest);
    mkdirSync(path.dirname(target), { recursive: true });
    if (from !== null) {
      // Hard links: the dependencies are half a gigabyte, and nothing writes into them.
      execFileSync('cp', ['-a', '--link', src, target]);
      continue;
    }
    if (ctx.ignored(source)) throw new Error(`COPY ${source}: .dockerignore leaves it out of the build context`);
    cpSync(src, target, { recursive: true, filter: (file) => !ctx.ignored(path.relative(REPO, file)) });
  }
}

/** The RUN steps the Dockerfile has, as the image runs them; the npm cache is the machine's, so it is not cleaned. */
function run(args: string, workdir: string, inImage: (p: string) => string): void {
  for (const step of args.split('&&').map((s) => s.trim())) {
    const words = step.split(/\s+/);
    if (words[0] === 'npm' && words[1] === 'ci') execFileSync('npm', [...words.slice(1), '--prefer-offline'], { cwd: workdir, stdio: 'ignore', env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } });
    else if (step === 'npm cache clean --force') continue;
    else if (words[0] === 'mkdir' && words[1] === '-p') for (const dir of words.slice(2)) mkdirSync(inImage(dir), { recursive: true });
    // Ownership needs root; the layout's files are the test's user's already.
    else if (words[0] === 'chown') continue;
    else throw new Error(`Dockerfile: RUN ${step} is not reproduced by the image layout`);
  }
}

/** Where a stage other than the last is kept: the hash of its instructions and every file its COPY lines take. */
function cachedStageRoot(stage: Instruction[], ignored: (relative: string) => boolean): string {
  const hash = createHash('sha256');
  for (const { keyword, args } of stage) {
    hash.update(`${keyword} ${args}\n`);
    if (keyword !== 'COPY' || args.startsWith('--from=')) continue;
    for (const source of args.split(/\s+/).slice(0, -1)) for (const file of filesUnder(source, ignored)) hash.update(file).update(readFileSync(path.join(REPO, file)));
  }
  return path.join(tmpdir(), `${STAGE_PREFIX}${hash.digest('hex').slice(0, 16)}`);
}

/** Half a gigabyte each: the stages of older lockfiles go once a new one is built. */
function pruneStages(kept: string): void {
  for (const entry of readdirSync(tmpdir())) {
    const stage = path.join(tmpdir(), entry);
    if (entry.startsWith(STAGE_PREFIX) && stage !== kept && !entry.includes('.')) rmSync(stage, { recursive: true, force: true });
  }
}

function filesUnder(relative: string, ignored: (relative: string) => boolean): string[] {
  if (ignored(relative)) return [];
  if (!lstatSync(path.join(REPO, relative)).isDirectory()) return [relative];
  return readdirSync(path.join(REPO, relative)).flatMap((entry) => filesUnder(`${relative}/${entry}`, ignored));
}

function fail(message: string): never {
  throw new Error(message);
}

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import { SHUTDOWN_MARGIN_MS } from '../../runtime/runtime.ts';
import { schemaVariables } from '../support/config-variables.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { composeDurationMs, composeFile, dockerfileStages, envPairs, k8sObjects, repoFile, type Instruction, type K8sObject } from '../support/manifests.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * The deployment recipes (Dockerfile, docker-compose.yml, deploy/nginx.conf, deploy/k8s) against the
 * code: their ports and probe paths are the runtime's (probed on the real runtime), their grace
 * periods cover its drain bound, the image runs node itself as a non-root user, and nginx — Debian's,
 * as .ci/run installs it — accepts the configuration and carries HTTP and a kiosk's WebSocket to a
 * real runtime while the other upstream is down. No image is built here (no container engine): its file
 * layout is, and started, in test/e2e/image.test.ts.
 */

const defaults = loadConfig({});
/** The longest a runtime takes from SIGTERM to exit: the drain bound, then closing (runtime/main.ts). */
const shutdownBoundMs = (drainMs: number) => drainMs + SHUTDOWN_MARGIN_MS;
/** `npm start`'s command without the shell's `exec`: the runtime's entry, which the image must run directly. */
const START_COMMAND = (JSON.parse(repoFile('package.json')) as { scripts: { start: string } }).scripts.start.replace(/^exec /, '').split(' ');

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
}, 60_000);
afterAll(async () => {
  await rt?.close();
});

const runtimePort = () => new URL(rt.url).port;
const probe = async (pathname: string) => (await fetch(`${rt.url}${pathname}`)).status;

describe('Dockerfile', () => {
  const stages = dockerfileStages(repoFile('Dockerfile'));
  const final = stages.at(-1)!;
  const all = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword);
  const one = (stage: Instruction[], keyword: string) => {
    const found = all(stage, keyword);
    expect(found, `the final stage's ${keyword}`).toHaveLength(1);
    return found[0]!.args;
  };
  const json = (args: string) => JSON.parse(args) as string[];

  it('is multi-stage on Node 24 slim: production dependencies installed from the lockfile in the first, copied into the last', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage[0]!.args).toMatch(/^node:24(\.\d+)*-slim(\s|$)/);
    const build = stages[0]!;
    const name = /\sAS\s+(\S+)/i.exec(build[0]!.args)?.[1];
    expect(name, 'the build stage is named').toBeDefined();
    expect(all(build, 'RUN').some((i) => /\bnpm ci --omit=dev\b/.test(i.args))).toBe(true);
    // onnxruntime-node's download step stays skipped: the build stage has the project's .npmrc.
    expect(all(build, 'COPY').some((i) => i.args.split(/\s+/).includes('.npmrc'))).toBe(true);
    expect(repoFile('.npmrc')).toMatch(/^onnxruntime-node-install=skip$/m);
    expect(all(final, 'COPY').some((i) => i.args.startsWith(`--from=${name} `) && i.args.includes('node_modules'))).toBe(true);
  });

  it('copies the sources the runtime reads, none of which .dockerignore leaves out', () => {
    const ignored = repoFile('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const copied = all(final, 'COPY')
      .filter((i) => !i.args.startsWith('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const dir of ['runtime', 'adapters', 'machines', 'migrations', 'packages']) expect(copied, dir).toContain(dir);
    for (const source of copied) {
      expect(existsSync(new URL(`../../${source}`, import.meta.url)), `${source} exists`).toBe(true);
      expect(ignored, `${source} is not in .dockerignore`).not.toContain(source);
    }
  });

  it('runs as a non-root user, in production, on the runtime’s port', () => {
    const user = one(final, 'USER');
    expect(user.split(':')[0]).not.toMatch(/^(root|0)$/);
    const env = Object.assign({}, ...all(final, 'ENV').map((i) => envPairs(i.args))) as Record<string, string>;
    expect(env.NODE_ENV).toBe('production');
    expect(env.KOHAMI_ENV).toBe('production');
    // Listening beyond loopback, on the port it exposes.
    expect(env.HOST).toBe('0.0.0.0');
    expect(one(final, 'EXPOSE')).toBe(env.PORT ?? String(defaults.PORT));
    expect(loadConfig(env)).toMatchObject({ PORT: Number(one(final, 'EXPOSE')), KOHAMI_ENV: 'production' });
  });

  it('starts node itself (PID 1, no npm or shell), on npm start’s entry', () => {
    const cmd = json(one(final, 'CMD'));
    expect(cmd[0]).toBe('node');
    expect(cmd).toEqual(START_COMMAND);
    expect(all(final, 'ENTRYPOINT')).toEqual([]);
  });

  it('HEALTHCHECK runs node’s fetch on /health: exit 0 on the real runtime, 1 once nothing answers', async () => {
    const args = one(final, 'HEALTHCHECK');
    const command = /\bCMD\s+(\[.*\])$/.exec(args)?.[1];
    expect(command, 'exec-form CMD').toBeDefined();
    const [bin, ...rest] = json(command!);
    expect(bin).toBe('node');
    expect(rest.join(' ')).toContain('/health');
    // Asynchronous: the runtime answering it runs in this process.
    const run = async (port: string) => {
      const child = spawn(process.execPath, rest, { env: { PORT: port }, stdio: 'ignore' });
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    };
    expect(await run(runtimePort())).toBe(0);
    expect(await run(String(await closedPort()))).toBe(1);
  });
});

describe('one image name and tag', () => {
  it('kohami-runtime:<package.json version> in the Dockerfile, docker-compose.yml, deploy/k8s and every tag the docs write', () => {
    const image = `kohami-runtime:${(JSON.parse(repoFile('package.json')) as { version: string }).version}`;
    const compose = Object.values(composeFile().services).filter((s) => s.build !== undefined);
    expect(compose.map((s) => s.image)).toEqual(compose.map(() => image));
    const pod = k8sObjects().find((o) => o.object.kind === 'Deployment')!.object as unknown as { spec: { template: { spec: { containers: Array<{ image: string }> } } } };
    expect(pod.spec.template.spec.containers.map((c) => c.image)).toEqual([image]);
    const kustomization = k8sObjects().find((o) => o.object.kind === 'Kustomization')!.object as unknown as { images: Array<{ name: string; newTag: string }> };
    expect(kustomization.images.map((i) => `${i.name}:${i.newTag}`)).toEqual([image]);
    expect(repoFile('Dockerfile')).toContain(`docker build -t ${image} .`);
    // Every image the docs build or run is that one (a release's own build and push name a later version).
    const operations = repoFile('docs/operations.md');
    const named = [...operations.matchAll(/docker (?:build -t|run [^\n]*?) (kohami-runtime(?::\S+)?)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(named.filter((n) => n !== image && n !== 'kohami-runtime:$VERSION')).toEqual([]);
    expect(operations).toContain(`docker build -t ${image} .`);
    // And every tag written anywhere in the docs and manifests: package.json's version, or a release's $VERSION.
    const files = ['README.md', 'Dockerfile', 'docker-compose.yml', ...readdirSync(new URL('../../docs', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), ...readdirSync(new URL('../../deploy/k8s', import.meta.url)).map((f) => `deploy/k8s/${f}`)];
    const tags = files.flatMap((file) => [...repoFile(file).matchAll(/kohami-runtime:([\w.$-]+)/g)].map((m) => `${file}: ${m[1]}`));
    expect(tags.length).toBeGreaterThanOrEqual(10);
    expect(tags.filter((t) => !t.endsWith(`: ${image.split(':')[1]}`) && !t.endsWith(': $VERSION'))).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  const { services } = composeFile();
  const runtimes = Object.entries(services).filter(([, s]) => s.build !== undefined);
  const envOf = (service: Record<string, unknown>) => service.environment as Record<string, string>;

  it('PostgreSQL with pgvector, and two runtime processes built from the Dockerfile on it', () => {
    expect(services.postgres!.image).toMatch(/^pgvector\/pgvector:/);
    expect(runtimes.length).toBe(2);
    for (const [name, service] of runtimes) {
      expect(service.build, name).toBe('.');
      const env = envOf(service);
      expect(new URL(env.DATABASE_URL!).hostname, `${name} uses the compose database`).toBe('postgres');
      expect(service.depends_on, name).toMatchObject({ postgres: { condition: 'service_healthy' } });
      expect(env.HOST).toBe('0.0.0.0');
      // The settings it passes are the runtime's, and valid (the ${VAR:-default} ones at their defaults).
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
      for (const key of Object.keys(env)) expect(schemaVariables(), key).toContain(key);
      expect(() => loadConfig(resolved)).not.toThrow();
    }
  });

  it('gives each runtime its drain bound before the engine kills it', () => {
    for (const [name, service] of runtimes) {
      const drain = Number(String(envOf(service).SHUTDOWN_DRAIN_MS ?? defaults.SHUTDOWN_DRAIN_MS).replace(/\$\{[A-Z_]+:-([^}]*)\}/, '$1'));
      expect(composeDurationMs(String(service.stop_grace_period)), name).toBeGreaterThan(shutdownBoundMs(drain));
    }
  });

  it('puts nginx in front, with deploy/nginx.conf’s upstreams the two runtimes on their port', () => {
    const lb = services.lb!;
    expect(lb.image).toMatch(/^nginx:/);
    expect(lb.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(Object.keys(lb.depends_on as object).sort()).toEqual(runtimes.map(([n]) => n).sort());
    const servers = [...repoFile('deploy/nginx.conf').matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((m) => [m[1], Number(m[2])]);
    expect(servers).toEqual(runtimes.map(([name, s]) => [name, Number(envOf(s).PORT ?? defaults.PORT)]));
  });
});

describe('deploy/k8s', () => {
  const objects = k8sObjects();
  const of = (kind: string) => {
    const found = objects.filter((o) => o.object.kind === kind);
    expect(found, kind).toHaveLength(1);
    return found[0]!.object as K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const deployment = of('Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const configMap = of('ConfigMap');
  const secret = of('Secret');
  const settings = { ...(configMap.data as Record<string, string>), ...(secret.stringData as Record<string, string>) };
  const port = (name: string | number) => (typeof name === 'number' ? name : container.ports.find((p: { name: string }) => p.name === name).containerPort);

  it('kustomization.yaml lists every manifest but the example Secret', () => {
    const listed = (objects.find((o) => o.object.kind === 'Kustomization')!.object.resources as string[]).sort();
    const files = [...new Set(objects.map((o) => o.file))].filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml').sort();
    expect(listed).toEqual(files);
  });

  it('the ConfigMap and Secret hold runtime settings only, and valid ones', () => {
    for (const key of Object.keys(settings)) expect(schemaVariables(), key).toContain(key);
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }, { secretRef: { name: secret.metadata.name } }]);
    expect(loadConfig(settings)).toMatchObject({ KOHAMI_ENV: 'production', HOST: '0.0.0.0' });
  });

  it('listens on the runtime’s port, the Service forwards to it', () => {
    expect(port('http')).toBe(loadConfig(settings).PORT);
    expect(port('http')).toBe(defaults.PORT);
    const service = of('Service');
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(service.spec.ports.map((p: { targetPort: string }) => p.targetPort)).toEqual(['http']);
  });

  it('readiness on /ready, liveness and start-up on /health, which the real runtime answers 200', async () => {
    expect(container.readinessProbe.httpGet.path).toBe('/ready');
    expect(container.livenessProbe.httpGet.path).toBe('/health');
    expect(container.startupProbe.httpGet.path).toBe('/health');
    for (const kind of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
      expect(port(container[kind].httpGet.port), kind).toBe(defaults.PORT);
      expect(await probe(container[kind].httpGet.path), kind).toBe(200);
    }
  });

  it('terminationGracePeriodSeconds covers preStop, the drain bound and the closing margin', () => {
    const preStop = container.lifecycle.preStop.exec.command as string[];
    expect(preStop[0]).toBe('sleep');
    const preStopMs = Number(preStop[1]) * 1000;
    const drainMs = loadConfig(settings).SHUTDOWN_DRAIN_MS;
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + shutdownBoundMs(drainMs));
  });

  it('runs node itself as a non-root user, without privileges', () => {
    expect(container.command).toEqual(START_COMMAND);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  });

  it('has resources, a rolling update that keeps capacity, and a PodDisruptionBudget that leaves a pod', () => {
    const mib = (q: string) => Number(/^(\d+)(Mi|Gi)$/.exec(q)![1]) * (q.endsWith('Gi') ? 1024 : 1);
    expect(mib(container.resources.limits.memory)).toBeGreaterThanOrEqual(mib(container.resources.requests.memory));
    expect(container.resources.requests.cpu).toBeDefined();
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    const pdb = of('PodDisruptionBudget');
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(pdb.spec.maxUnavailable).toBeLessThan(deployment.spec.replicas);
  });
});

/** Debian's nginx (`apt-get install nginx`, as .ci/run does). */
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

describe('deploy/nginx.conf under Debian’s nginx', () => {
  let dir: string;
  let conf: string;
  let nginx: ChildProcess | null = null;
  let nginxLog = '';
  let lb: string;

  beforeAll(async () => {
    if (!NGINX) throw new Error('nginx is not installed: apt-get install -y nginx (.ci/run installs it)');
    dir = await mkdtemp(path.join(tmpdir(), 'kohami-nginx-'));
    const lbPort = await closedPort();
    lb = `127.0.0.1:${lbPort}`;
    // The compose file's upstreams, pointed at loopback: the first at the real runtime, the second at a
    // port nothing listens on (a process that is down). Temporary files and the pid in `dir`.
    conf = path.join(dir, 'nginx.conf');
    await writeFile(
      conf,
      substitute(repoFile('deploy/nginx.conf'), [
        [/server runtime-a:\d+/, `server 127.0.0.1:${runtimePort()}`],
        [/server runtime-b:\d+/, `server 127.0.0.1:${await closedPort()}`],
        [/listen \d+;/, `listen ${lb};`],
        [/pid \S+;/, `pid ${dir}/nginx.pid;`],
        [/http \{/, `http {\n  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join(' ')}`],
      ]),
    );
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGTERM');
      await once(nginx, 'exit');
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('nginx -t accepts it', () => {
    const test = spawnSync(NGINX!, ['-t', '-p', dir, '-e', 'stderr', '-c', conf], { encoding: 'utf8', timeout: 30_000 });
    expect(test.stderr).toContain('test is successful');
    expect(test.status).toBe(0);
  });

  it('carries the probes and a kiosk’s WebSocket (with a browser’s Origin) to the runtime that is up', async () => {
    nginx = spawn(NGINX!, ['-p', dir, '-e', 'stderr', '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stderr!.on('data', (d) => (nginxLog += d));
    await expect.poll(() => fetch(`http://${lb}/health`).then((r) => r.status, () => 0), { timeout: 20_000 }).toBe(200);
    // Several tokens, so the hash sends some to the process that is down: nginx takes them to the next.
    for (const token of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      const res = await fetch(`http://${lb}/ready`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, token).toBe(200);
    }
    expect(nginxLog).toMatch(/Connection refused\) while connecting to upstream/);
    // Upgrade headers and Host pass through: the runtime's same-origin check sees the port the browser used.
    const kiosk = await KioskClient.connect(`ws://${lb}/v1/kiosk`, undefined, { headers: { authorization: `Bearer ${KIOSK_TOKEN}`, origin: `http://${lb}` } });
    expect(await kiosk.start()).toMatchObject({ type: 'session.ready' });
    expect(await kiosk.turn('t1', 'Bonjour')).toMatchObject({ type: 'reply.done', flux: 'cache' });
    kiosk.close();
  });
});

/** Replaces each pattern exactly once, so the test breaks if the configuration's shape moves. */
function substitute(text: string, replacements: Array<[RegExp, string]>): string {
  return replacements.reduce((out, [pattern, by]) => {
    expect(out.match(new RegExp(pattern.source, 'g')), String(pattern)).toHaveLength(1);
    return out.replace(pattern, by);
  }, text);
}

/** A loopback port nothing listens on (taken then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

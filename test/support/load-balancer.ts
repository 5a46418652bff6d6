import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Debian's nginx (`apt-get install -y nginx`; `.ci/run` installs it). */
export const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
/** A start that takes longer is a broken install or a busy port, not a slow machine: nginx binds before it forks. */
const START_BOUND_MS = 10_000;

/** A free loopback TCP port now (a runtime restarted on it later finds it free again: Node sets SO_REUSEADDR). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface LoadBalancer {
  /** http://127.0.0.1:port of the balancer, and its kiosk socket. */
  url: string;
  ws: string;
  stop(): Promise<void>;
}

/** The balancer the project ships (docker-compose.yml's `lb`): the scale-out tests run its very configuration. */
const SHIPPED = fileURLToPath(new URL('../../deploy/nginx.conf', import.meta.url));

/** Replaces each pattern exactly once, so the helper breaks if the configuration's shape moves. */
function substitute(text: string, replacements: Array<[RegExp, string | ((...groups: string[]) => string)]>): string {
  return replacements.reduce((out, [pattern, by]) => {
    const found = out.match(new RegExp(pattern.source, `g${pattern.flags.replace('g', '')}`))?.length ?? 0;
    if (found !== 1) throw new Error(`deploy/nginx.conf: ${String(pattern)} matched ${found} times, not once`);
    return out.replace(pattern, by as string);
  }, text);
}

/**
 * deploy/nginx.conf with its two upstreams replaced by `upstreams` (loopback ports, each with the shipped
 * server parameters), listening on `listenPort` on loopback, its pid and temporary files in `dir`, and
 * logging at `notice` (its start line tells when it serves).
 */
export function nginxConfig(dir: string, listenPort: number, upstreams: number[]): string {
  return substitute(readFileSync(SHIPPED, 'utf8'), [
    [/^(\s*)server runtime-a:\d+( [^;]*)?;\n\s*server runtime-b:\d+[^;]*;\n/m, (_all, indent, params = '') => upstreams.map((port) => `${indent}server 127.0.0.1:${port}${params};\n`).join('')],
    [/listen \d+;/, `listen 127.0.0.1:${listenPort};`],
    [/pid \S+;/, `pid ${dir}/nginx.pid;`],
    [/error_log stderr \w+;/, 'error_log stderr notice;'],
    [/http \{/, `http {\n  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir}/${t};`).join(' ')}`],
  ]);
}

/** Debian's nginx on deploy/nginx.conf in front of the runtime processes on `upstreams`, on a free loopback port; started within START_BOUND_MS. */
export async function startLoadBalancer(upstreams: number[]): Promise<LoadBalancer> {
  if (!existsSync(NGINX)) throw new Error(`no nginx at ${NGINX}: apt-get install -y nginx (or set NGINX_BIN)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'kohami-lb-'));
  // nginx started as root runs its worker as `nobody`, which must reach its temporary directories here.
  await chmod(dir, 0o755);
  const port = await freePort();
  const config = path.join(dir, 'nginx.conf');
  await writeFile(config, nginxConfig(dir, port, upstreams));
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', config, '-e', 'stderr', '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const exited = once(child, 'exit');
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nginx did not start within ${START_BOUND_MS} ms:\n${out}`)), START_BOUND_MS);
      const check = () => {
        // Logged by the master once its sockets are bound and the worker forked.
        if (!out.includes('start worker process')) return;
        clearTimeout(timer);
        resolve();
      };
      child.stderr!.on('data', check);
      child.once('error', (err) => (clearTimeout(timer), reject(err)));
      child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`nginx exited with ${code}:\n${out}`))));
    });
  } catch (err) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    ws: `ws://127.0.0.1:${port}/v1/kiosk`,
    stop: async () => {
      // SIGTERM: a fast shutdown, which does not wait for the open WebSockets as SIGQUIT would.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

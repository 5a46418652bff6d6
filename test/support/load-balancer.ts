import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

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

/**
 * The configuration of a WebSocket-aware round-robin balancer over `upstreams` (loopback ports), as an
 * operator would write it: the upgrade headers passed on, long-lived sockets not cut by a read timeout,
 * and a handshake refused by a draining runtime (503) or a dead one (connection refused) retried on the
 * next. `max_fails=0`: no runtime is ever taken out for a while, every handshake tries them in turn (a
 * restarted runtime is used again at once; a refused connection on loopback costs nothing).
 */
export function nginxConfig(dir: string, listenPort: number, upstreams: number[]): string {
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr notice;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  upstream runtimes {
${upstreams.map((port) => `    server 127.0.0.1:${port} max_fails=0;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${listenPort};
    location / {
      proxy_pass http://runtimes;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_connect_timeout 1s;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries ${upstreams.length};
    }
  }
}
`;
}

/** nginx in front of the runtime processes on `upstreams`, on a free loopback port; started within START_BOUND_MS. */
export async function startLoadBalancer(upstreams: number[]): Promise<LoadBalancer> {
  if (!existsSync(NGINX)) throw new Error(`no nginx at ${NGINX}: apt-get install -y nginx (or set NGINX_BIN)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'kohami-lb-'));
  // nginx started as root runs its worker as `nobody`, which must reach its temporary directories here.
  await chmod(dir, 0o755);
  const port = await freePort();
  const config = path.join(dir, 'nginx.conf');
  await writeFile(config, nginxConfig(dir, port, upstreams));
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', config, '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
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

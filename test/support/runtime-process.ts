import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { offeredCalibrationFile } from './cache-calibration.ts';
import { startupAllowanceMs } from './manifests.ts';
import { childEnv } from './child-env.ts';
import { TEST_NODE_FLAGS } from './node-flags.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN } from './runtime.ts';

/** A real runtime process (`npm start`'s entry), its URL and its kiosk socket's. */
export interface RuntimeProcess {
  child: ChildProcess;
  url: string;
  ws: string;
  /** Everything it wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/** A real runtime process on `databaseUrl` (several may share it), with the demo tokens; `env` adds settings. */
export async function runtimeProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<RuntimeProcess> {
  return spawnRuntime([...TEST_NODE_FLAGS, 'runtime/main.ts'], { env: childEnv(runtimeProcessEnv(databaseUrl, env)) });
}

/** The settings of a test's runtime process on `databaseUrl`: the test environment, any port, the demo tokens; `env` on top. */
export function runtimeProcessEnv(databaseUrl: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    KOHAMI_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    DEV_KIOSK_TOKEN: KIOSK_TOKEN,
    DEV_ADMIN_TOKEN: ADMIN_TOKEN,
    SEMANTIC_CACHE_CALIBRATION_FILE: offeredCalibrationFile(),
    ...env,
  };
}

/**
 * `node ARGS` as the runtime, once its banner says it listens: from `cwd` (this checkout by default), on
 * exactly `env`, within `startMs` (by default the start the deployment allows, `startupAllowanceMs()`).
 */
export async function spawnRuntime(args: string[], options: { env: Record<string, string>; cwd?: string; startMs?: number }): Promise<RuntimeProcess> {
  const child = spawn(process.execPath, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const startMs = options.startMs ?? startupAllowanceMs();
  // One listener each until the banner, the process's end or the bound, whichever comes first: a process
  // that hangs silently is killed at the bound, and one that dies says why in the error.
  await new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(bound);
      child.stdout!.off('data', onOutput);
      child.stderr!.off('data', onOutput);
      child.off('close', onClose);
      if (!error) return resolve();
      child.kill('SIGKILL');
      reject(error);
    };
    const onOutput = () => {
      if (out.includes('kiosk WebSocket')) settle();
    };
    const onClose = () => settle(new Error(`runtime process exited before it started:\n${out}`));
    const bound = setTimeout(() => settle(new Error(`runtime process did not start within ${startMs} ms:\n${out}`)), startMs);
    child.stdout!.on('data', onOutput);
    child.stderr!.on('data', onOutput);
    child.once('close', onClose);
  });
  const url = /listening on (\S+)/.exec(out)![1]!;
  return {
    child,
    url,
    ws: `${url.replace('http', 'ws')}/v1/kiosk`,
    output: () => out,
    stop: async () => {
      // Gone already: exited, or killed by a signal (a test's kill -9), when 'exit' has been emitted.
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** One sample of a runtime process's /metrics, summed over label sets. */
export async function processMetric(p: RuntimeProcess, name: string): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

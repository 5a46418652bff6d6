import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { childEnv } from './child-env.ts';

/** `npm start` in a process group of its own, as a terminal, systemd or a process manager runs it. */
export interface NpmStart {
  npm: ChildProcess;
  url: string;
  ws: string;
  /** Everything npm and the runtime wrote to stdout and stderr. */
  output(): string;
  /** Resolves once npm has exited and every holder of its pipes (an orphaned runtime would be one) is gone. */
  closed: Promise<unknown>;
  /** A signal to the whole process group: npm and the runtime both receive it, and npm forwards its own. */
  signalGroup(signal: NodeJS.Signals): void;
}

/** Starts `npm start` with `env` (and PATH, HOME) in its own process group; resolves once its banner is out. */
export async function npmStart(env: Record<string, string>): Promise<NpmStart> {
  const npm = spawn('npm', ['start', '--silent'], {
    env: childEnv({ HOME: process.env.HOME ?? '/tmp', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  npm.stdout!.on('data', (d) => (out += d));
  npm.stderr!.on('data', (d) => (out += d));
  const closed = once(npm, 'close');
  const signalGroup = (signal: NodeJS.Signals) => process.kill(-npm.pid!, signal);
  // However long npm, Node and PGlite take to load on a loaded machine; an npm that exits first fails here.
  await new Promise<void>((resolve, reject) => {
    // The banner is one write, well under a pipe's atomic size.
    const check = () => out.includes('kiosk WebSocket') && resolve();
    npm.stdout!.on('data', check);
    npm.once('exit', (code) => reject(new Error(`npm start exited ${code} before its banner:\n${out}`)));
    check();
  });
  const url = /listening on (\S+)/.exec(out)![1]!;
  return { npm, url, ws: /kiosk WebSocket:\s+(\S+)/.exec(out)![1]!, output: () => out, closed, signalGroup };
}

import websocket from '@fastify/websocket';
import Fastify from 'fastify';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { startRuntime } from '../runtime/runtime.ts';
import { seedBenchSeniors } from './support/seed-seniors.ts';

/**
 * The server side of bench:gateway, run as its own process so its RSS is its own.
 * `echo`: bare Fastify + @fastify/websocket answering each frame. `runtime`: the real runtime.
 */
const kind = process.argv[2];
const seniors = Number(process.argv[3] ?? 0);

async function start(): Promise<{ url: string; sessions: () => number }> {
  if (kind === 'echo') {
    const app = Fastify();
    await app.register(websocket);
    app.get('/v1/kiosk', { websocket: true }, (socket) => {
      socket.on('message', (data) => socket.send(data.toString()));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    return { url: `ws://127.0.0.1:${port}/v1/kiosk`, sessions: () => app.websocketServer.clients.size };
  }
  const config = loadConfig({ KOHAMI_ENV: 'test', PORT: '0', PGLITE_DATA_DIR: 'memory://' });
  // The per-socket flood limit (20 frames/s) would cap a closed-loop generator, not measure the runtime.
  const rt = await startRuntime(config, { logger: createLogger('silent'), rateLimit: { perSecond: 1e6, burst: 1e6 } });
  await seedBenchSeniors(rt, seniors);
  return { url: `${rt.url.replace('http', 'ws')}/v1/kiosk`, sessions: () => rt.registry.size };
}

const server = await start();
process.send!({ type: 'ready', url: server.url });
process.on('message', (msg: { type: string }) => {
  // CPU time of the whole process (every thread: the PGlite worker's, GC helpers'), read before any GC.
  if (msg.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send!({ type: 'cpu', micros: user + system });
  }
  if (msg.type !== 'measure') return;
  for (let i = 0; i < 3; i++) global.gc?.();
  process.send!({ type: 'measure', rss: process.memoryUsage().rss, sessions: server.sessions() });
});
process.on('SIGINT', () => process.exit(0));

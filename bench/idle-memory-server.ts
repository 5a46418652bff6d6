import { existsSync } from 'node:fs';
import path from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import type { Runtime } from '../runtime/runtime.ts';

/**
 * The measured side of bench:idle-memory: the runtime on the configuration its environment gives
 * (as `npm start` reads it), started and left idle, reporting its V8 heaps. With `bare` it starts
 * nothing: Node's own floor under the same flags. With `initdb-here` a new data directory is
 * initialized in this process first, as the runtime did before initdb had a process of its own.
 */
const MIB = 2 ** 20;
async function start(): Promise<Runtime> {
  const [{ loadConfig }, { createLogger }, { startRuntime }] = await Promise.all([import('../runtime/config.ts'), import('../runtime/logger.ts'), import('../runtime/runtime.ts')]);
  const config = loadConfig();
  if (process.argv[2] === 'initdb-here' && !existsSync(path.join(config.PGLITE_DATA_DIR, 'PG_VERSION'))) {
    const { PGlite } = await import('@electric-sql/pglite');
    await (await PGlite.create({ dataDir: config.PGLITE_DATA_DIR, startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${config.PGLITE_SHARED_BUFFERS_MB}MB`] })).close();
  }
  return startRuntime(config, { logger: createLogger('silent') });
}
// Imported only when measured: the floor loads none of the runtime's modules.
const rt = process.argv[2] === 'bare' ? null : await start();
process.send!({ type: 'ready' });
process.on('message', (msg: { type: string }) => {
  if (msg.type === 'measure') {
    const spaces = getHeapSpaceStatistics();
    const heap = spaces.reduce((sum, s) => sum + s.physical_space_size, 0) / MIB;
    const youngGen = spaces.filter((s) => s.space_name === 'new_space').reduce((sum, s) => sum + s.physical_space_size, 0) / MIB;
    const worker = rt?.db.thread?.getHeapStatistics() ?? Promise.resolve(null);
    void worker.then((stats) => process.send!({ type: 'measure', heap, youngGen, pgliteHeap: stats ? stats.total_physical_size / MIB : 0 }));
  }
  if (msg.type === 'close') void (rt?.close() ?? Promise.resolve()).then(() => process.exit(0));
});

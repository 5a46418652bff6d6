// Embedded PGlite in its own thread, served over the Postgres wire protocol on loopback.
// PGlite executes queries synchronously in WASM; here that time is spent off the event loop
// that answers kiosks (one insert under the HNSW index takes ~13 ms).
// Plain JavaScript: a worker thread on Node 20 cannot load TypeScript through tsx's hooks.
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { parentPort, workerData } from 'node:worker_threads';

const db = await PGlite.create({ dataDir: workerData.dataDir, extensions: { vector } });
const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 64 });
await server.start();
parentPort.postMessage({ type: 'ready', address: server.getServerConn() });
parentPort.on('message', async (msg) => {
  if (msg.type !== 'close') return;
  await server.stop();
  await db.close();
  parentPort.postMessage({ type: 'closed' });
});

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { readFileSync } from 'node:fs';
const mode = process.argv[2];
for (let i = 0; i < 4; i++) {
const c0 = process.cpuUsage(); const t0 = performance.now();
const image = readFileSync('/tmp/pglite-open-image.tar');
const load = mode === 'duck' ? ({ type: 'application/x-tar', arrayBuffer: async () => image.buffer.slice(image.byteOffset, image.byteOffset + image.byteLength) } as unknown as Blob) : new Blob([image]);
const db = await PGlite.create({ dataDir: 'memory://', loadDataDir: load, extensions: { vector } });
await db.query('select count(*) from pg_class');
const c = process.cpuUsage(c0); console.log(mode, 'wall', (performance.now()-t0).toFixed(0), 'cpu', (c.user/1000).toFixed(0), (c.system/1000).toFixed(0));
await db.close();
}

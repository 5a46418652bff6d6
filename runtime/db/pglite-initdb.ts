import { PGlite } from '@electric-sql/pglite';

/**
 * A new embedded data directory's initdb, in a process of its own (`initPgliteDataDir`): PGlite's
 * initdb fills every shared buffer and leaves V8's compiler memory in glibc's arenas, which a
 * long-lived process keeps for good (bench:idle-memory, first start). Exits 0 once the directory
 * holds a closed, initialized cluster.   argv: dataDir
 */
const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: pglite-initdb.ts <dataDir>');
const db = await PGlite.create({ dataDir });
await db.close();

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { seedDevData } from '../../runtime/db/dev-seed.ts';
import { migratedDatabase } from '../support/database.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/** Processes starting at once on one database: each has its own pool, as a runtime does. */
const STARTS = 4;
let wire: SharedDatabase;
let db: Awaited<ReturnType<typeof migratedDatabase>>;
const pools: pg.Pool[] = [];
beforeAll(async () => {
  wire = await sharedDatabase();
  db = await migratedDatabase(wire.url);
  for (let i = 0; i < STARTS; i++) pools.push(new pg.Pool({ connectionString: wire.url, max: 2 }));
}, 60_000);
afterAll(async () => {
  for (const pool of pools) await pool.end();
  await db?.close();
  await wire?.stop();
});

describe(`the demo seed, ${STARTS} starts at once on one empty database`, () => {
  it('seeds one demo senior between them, with every consent, and the others seed nothing', async () => {
    // The same chosen tokens everywhere (DEV_KIOSK_TOKEN in a scale-out's environment): two seeds would collide on them.
    const tokens = { kioskToken: generateToken('kiosk'), adminToken: generateToken('admin') };
    const seeds = await Promise.all(pools.map((pool) => seedDevData(pool, tokens)));
    const seeded = seeds.filter((seed) => seed !== null);
    expect(seeded).toHaveLength(1);
    expect(seeded[0]).toMatchObject({ ...tokens, generated: false });
    const counts = await db.pool.query<{ seniors: number; devices: number; tokens: number; consents: number }>(
      `SELECT (SELECT count(*)::int FROM seniors) AS seniors, (SELECT count(*)::int FROM devices) AS devices,
              (SELECT count(*)::int FROM api_tokens) AS tokens, (SELECT count(*)::int FROM consents WHERE revoked_at IS NULL) AS consents`,
    );
    expect(counts.rows[0]).toEqual({ seniors: 1, devices: 1, tokens: 1, consents: CONSENT_CATEGORIES.length });
    expect(await db.directory.seniorForKioskToken(tokens.kioskToken)).toBe(seeded[0]!.seniorId);
  });

  it('a start on a database that is no longer empty seeds nothing', async () => {
    expect(await seedDevData(pools[0]!, {})).toBeNull();
    expect((await db.pool.query('SELECT 1 FROM seniors')).rowCount).toBe(1);
  });
});

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgCaregiverAlertsRepository } from '../../adapters/postgres/pg-caregiver-alerts.repository.ts';
import { PgErasureRepository } from '../../adapters/postgres/pg-erasure.repository.ts';
import { migrate } from '../../adapters/postgres/migrations.ts';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import type { MoodAlert } from '../../machines/memory/mood-alerts.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';

/**
 * The caregivers' alert episodes recorded by two processes at once: two pools on one database (PGlite
 * over the wire protocol, or TEST_DATABASE_URL's server), as two runtime processes sharing DATABASE_URL
 * have. The (senior, kind, first day) key must make each episode one row, added by one side only.
 */
const ROUNDS = 12;
const EPISODES: MoodAlert[] = [
  { kind: 'tier_streak', open: false, from: '2026-11-02', to: '2026-11-04', days: 3, tier: 'preoccupant' },
  { kind: 'tier_streak', open: true, from: '2026-11-20', to: '2026-11-23', days: 4, tier: 'preoccupant' },
  { kind: 'weekly_drop', open: true, from: '2026-11-21', to: '2026-11-23', days: 3, previousAverage: 70, average: 50, drop: 20 },
];

let wire: SharedDatabase;
let one: pg.Pool;
let two: pg.Pool;
let sides: [PgCaregiverAlertsRepository, PgCaregiverAlertsRepository];
let directory: SeniorDirectory;

beforeAll(async () => {
  wire = await sharedDatabase();
  one = new pg.Pool({ connectionString: wire.url, max: 4 });
  two = new pg.Pool({ connectionString: wire.url, max: 4 });
  await migrate(one);
  // Each pool's connections open before the races, so the statements interleave (not the connection set-ups).
  for (const pool of [one, two]) await Promise.all(Array.from({ length: 4 }, () => pool.query('SELECT 1')));
  sides = [new PgCaregiverAlertsRepository(one), new PgCaregiverAlertsRepository(two)];
  directory = new SeniorDirectory(one);
});
afterAll(async () => {
  await one?.end();
  await two?.end();
  await wire?.stop();
});

const newSenior = () => directory.createSenior({ displayName: 'Course Alertes', preferredName: 'Odette', onboardingDone: true });
const rowsOf = async (seniorId: string) =>
  (await one.query<{ id: string; kind: string; from: string }>(`SELECT id, kind, to_char(from_day, 'YYYY-MM-DD') AS from FROM caregiver_alerts WHERE senior_id = $1`, [seniorId])).rows;
const orphans = async () =>
  (await one.query<{ n: number }>('SELECT count(*)::int AS n FROM caregiver_alerts a WHERE NOT EXISTS (SELECT 1 FROM seniors s WHERE s.id = a.senior_id)')).rows[0]!.n;

describe('two processes recording the same episodes at once', () => {
  it('adds each episode once, on one side only: one row each, and each pending delivery listed once', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const senior = await newSenior();
      const [a, b] = await Promise.all(sides.map((side) => side.record(senior, EPISODES, true)));
      const rows = await rowsOf(senior);
      expect(rows.map((r) => `${r.kind} ${r.from}`).sort()).toEqual(EPISODES.map((e) => `${e.kind} ${e.from}`).sort());
      // Every row was added by exactly one of the two sides.
      expect([...a!, ...b!].sort()).toEqual(rows.map((r) => r.id).sort());
      const [pendingA, pendingB] = await Promise.all(sides.map((side) => side.pendingDeliveries(senior)));
      for (const pending of [pendingA!, pendingB!]) expect([...pending].sort()).toEqual(rows.map((r) => r.id).sort());
    }
  });
});

describe('a recording racing the erasure of its senior', () => {
  // The documented outcome (record()): nothing is recorded for a senior being erased or gone; what was
  // recorded before goes with the senior. Either order, the recording resolves and leaves no row behind.
  const race = async (erase: (senior: string) => Promise<unknown>) => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const senior = await newSenior();
      const [recorded, erased] = await Promise.allSettled([sides[0].record(senior, EPISODES, true), erase(senior)]);
      expect(erased.status).toBe('fulfilled');
      expect(recorded.status).toBe('fulfilled');
      expect(await rowsOf(senior)).toEqual([]);
      expect(await sides[1].pendingDeliveries(senior)).toEqual([]);
    }
    expect(await orphans()).toBe(0);
  };

  it('a DELETE of the senior row from the other process', async () => {
    await race((senior) => two.query('DELETE FROM seniors WHERE id = $1::uuid', [senior]));
  });

  it('the erasure as the runtime runs it from the other process: the fence, then every table', async () => {
    const erasure = new PgErasureRepository(two);
    await race(async (senior) => {
      await erasure.fence(senior);
      await erasure.eraseSenior(senior);
    });
  });
});

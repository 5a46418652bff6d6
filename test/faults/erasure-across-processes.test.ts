import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgConsentAdapter } from '../../adapters/postgres/pg-consent.adapter.ts';
import { SeniorDirectory } from '../../adapters/postgres/senior-directory.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { KioskClient, type Frame } from '../support/kiosk-client.ts';
import { sharedDatabase, type SharedDatabase } from '../support/shared-database.ts';
import { ADMIN_TOKEN, KIOSK_TOKEN } from '../support/runtime.ts';
import { processMetric as metric, runtimeProcess, type RuntimeProcess } from '../support/runtime-process.ts';

/**
 * Two real runtime processes on one database (PGlite over the wire protocol, or TEST_DATABASE_URL's
 * server). Presence beats at its default, 5 s, so
 * nothing here is explained by a heartbeat: only the erasure notices can meet the bound.
 */
const ERASURE_POLL_MS = 250;
/** What a busy 2-core machine may add to a poll: the queries on the shared PGlite, the frame's way to the kiosk. */
const MARGIN_MS = 1_000;
const BOUND_MS = ERASURE_POLL_MS + MARGIN_MS;

let wire: SharedDatabase;
let a: RuntimeProcess;
let b: RuntimeProcess;
let db: pg.Pool;

/** When (performance.now()) the kiosk received its first frame of `type`. */
function arrival(kiosk: KioskClient, type: string): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (raw: Buffer) => {
      if ((JSON.parse(raw.toString()) as Frame).type !== type) return;
      kiosk.socket.off('message', onMessage);
      resolve(performance.now());
    };
    kiosk.socket.on('message', onMessage);
  });
}

/** The first frame about `turnId`, among those received so far or the next ones. */
async function firstFor(kiosk: KioskClient, turnId: string): Promise<Frame> {
  return kiosk.frames.find((f) => f.turnId === turnId) ?? kiosk.next((f) => f.turnId === turnId);
}

beforeAll(async () => {
  wire = await sharedDatabase();
  a = await runtimeProcess(wire.url, { ERASURE_POLL_MS: String(ERASURE_POLL_MS) });
  b = await runtimeProcess(wire.url, { ERASURE_POLL_MS: String(ERASURE_POLL_MS) });
  db = new pg.Pool({ connectionString: wire.url, max: 1 });
}, 90_000);
afterAll(async () => {
  for (const p of [a, b]) await p?.stop();
  await db?.end();
  await wire?.stop();
});

describe('erasure through one process of a senior whose session lives in another', () => {
  it('closes the session as erased within ERASURE_POLL_MS, answers no later turn, and purges the other process’s caches', async () => {
    const directory = new SeniorDirectory(db);
    const paul = await directory.createSenior({ displayName: 'Paul Martin', preferredName: 'Paul', onboardingDone: true });
    const paulToken = generateToken('kiosk');
    await directory.addDevice(paul, paulToken);
    const consents = new PgConsentAdapter(db);
    for (const category of CONSENT_CATEGORIES) await consents.grant(paul, category);

    // On B: Marie (the demo senior) and Paul each leave a reply in B's semantic cache; Paul's is a hit.
    const marie = await KioskClient.connect(b.ws, KIOSK_TOKEN);
    await marie.start();
    expect(await marie.turn('m1', 'Quel temps fera-t-il demain ?')).toMatchObject({ flux: 'agent' });
    const kiosk = await KioskClient.connect(b.ws, paulToken);
    await kiosk.start();
    expect(await kiosk.turn('p1', 'Quelle heure est-il à Nantes ?')).toMatchObject({ flux: 'agent' });
    expect(await kiosk.turn('p2', 'Quelle heure est-il à Nantes ?')).toMatchObject({ flux: 'semantic_cache' });
    expect(await metric(b, 'kohami_semantic_cache_entries')).toBe(2);
    // Each turn's mood is derived while the session is live: B's pool has finished those before the count is taken.
    await expect.poll(async () => (await metric(b, 'kohami_close_jobs_queued')) + (await metric(b, 'kohami_close_jobs_in_flight'))).toBe(0);
    const closeJobsBefore = await metric(b, 'kohami_close_jobs_total');

    const closedAt = arrival(kiosk, 'session.closed');
    const sentAt = performance.now();
    const res = await fetch(`${a.url}/v1/admin/seniors/${paul}/data`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const respondedAt = performance.now();
    expect(res.status).toBe(200);
    kiosk.send({ type: 'turn', turnId: 'after', transcript: 'Quelle heure est-il à Nantes ?' });

    // Generous wait on the event itself; the bound is asserted on the measured delay.
    expect(await kiosk.next('session.closed')).toMatchObject({ reason: 'erased' });
    const delayMs = (await closedAt) - respondedAt;
    console.log(`erasure on A → session.closed on B: ${((await closedAt) - sentAt).toFixed(0)} ms after the DELETE was sent, ${delayMs.toFixed(0)} ms after its response (negative: before it)`);
    expect(delayMs).toBeLessThanOrEqual(BOUND_MS);

    // The turn sent after the DELETE's response is refused, never answered.
    expect(await firstFor(kiosk, 'after')).toMatchObject({ type: 'error', code: 'no_session' });
    expect(kiosk.frames.filter((f) => f.turnId === 'after' && String(f.type).startsWith('reply.'))).toEqual([]);

    // B's own cache lost Paul's entry and kept Marie's; no close-time derivation ran on B for the erased session.
    expect(await metric(b, 'kohami_semantic_cache_entries')).toBe(1);
    expect(await metric(b, 'kohami_close_jobs_total')).toBe(closeJobsBefore);
    expect(await marie.turn('m2', 'Quel temps fera-t-il demain ?')).toMatchObject({ flux: 'semantic_cache' });
    kiosk.close();
    marie.close();
  });
});

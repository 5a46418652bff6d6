import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { CONSENT_CATEGORIES } from '../../machines/memory/memory.port.ts';
import { filesContaining } from '../support/canary-sweep.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel, subagentModel } from '../support/models.ts';
import { adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * Erased means unreadable: a senior's rows, written through the runtime's own paths, are gone from
 * every byte of the embedded database's directory (heap files, indexes, WAL) once the purge that the
 * erasure asks for has run — while the runtime still runs, and after a clean close.
 */
const CANARY = 'QZXCANARIWREN';
const summary = `Le senior a parlé de son oiseau ${CANARY} au jardin.`;
const fact = { content: `Elle nourrit un oiseau nommé ${CANARY}.`, category: 'profil', confidence: 0.9 };

let dataDir: string;
let rt: TestRuntime | null = null;

beforeAll(async () => {
  dataDir = path.join(await mkdtemp(path.join(tmpdir(), 'kohami-erased-')), 'pglite');
  rt = await startTestRuntime(
    { agentModel: streamingModel(['Je vous écoute.']), subagentModel: subagentModel({ score: 70, summary, facts: [fact] }) },
    { PGLITE_DATA_DIR: dataDir, ERASURE_PURGE_DELAY_S: '0' },
  );
}, 60_000);
afterAll(async () => {
  await rt?.close();
  await rm(path.dirname(dataDir), { recursive: true, force: true });
});

describe('erased rows on disk', () => {
  it('leave no byte of the senior’s name, facts, summaries or segments in the data directory after the purge, nor after a clean close', async () => {
    const runtime = rt!;
    const api = adminApi(runtime);
    const senior = await runtime.directory.createSenior({ displayName: `Zoé ${CANARY}`, preferredName: 'Zoé', onboardingDone: true });
    for (const category of CONSENT_CATEGORIES) await runtime.consents.grant(senior, category);
    const token = generateToken('kiosk');
    await runtime.directory.addDevice(senior, token);
    expect((await api('POST', `/v1/admin/seniors/${senior}/facts`, { content: `Son voisin s’appelle ${CANARY} Martin.`, category: 'contacts' })).status).toBe(201);
    expect((await api('PUT', `/v1/admin/seniors/${senior}/profile`, { interlocutor: { interests: [`les oiseaux, surtout ${CANARY}`] } })).status).toBe(200);
    // A session: each turn's mood and summary, then the extracted fact and the segment at close.
    const kiosk = await KioskClient.connect(runtime.wsUrl, token);
    await kiosk.start();
    await kiosk.turn('t0', 'je suis allée au jardin ce matin');
    await kiosk.turn('t1', 'les oiseaux chantaient beaucoup');
    kiosk.send({ type: 'session.end' });
    await kiosk.next('session.closed');
    kiosk.close();
    expect(await runtime.closeJobs.drain(30_000)).toBe(true);
    // Another senior's rows, which the purge must keep.
    const marie = runtime.seed!.seniorId;
    expect((await api('POST', `/v1/admin/seniors/${marie}/facts`, { content: 'Marie aime les roses anciennes.', category: 'profil' })).status).toBe(201);
    const written = await runtime.db.pool.query(
      `SELECT (SELECT count(*)::int FROM mood_scores WHERE senior_id = $1 AND summary LIKE $2) AS moods,
              (SELECT count(*)::int FROM segments WHERE senior_id = $1 AND summary LIKE $2) AS segments,
              (SELECT count(*)::int FROM memory_facts WHERE senior_id = $1 AND fact LIKE $2) AS facts`,
      [senior, `%${CANARY}%`],
    );
    expect(written.rows[0]).toEqual({ moods: 2, segments: 1, facts: 2 });
    expect(await filesContaining(dataDir, CANARY)).not.toEqual([]);

    expect((await api('DELETE', `/v1/admin/seniors/${senior}/data`)).status).toBe(200);
    // The purge the erasure asked for (ERASURE_PURGE_DELAY_S=0): waited for by its own log line.
    await expect.poll(() => runtime.logs.text.includes('erasure purge done'), { timeout: 60_000 }).toBe(true);
    const purge = JSON.parse(runtime.logs.lines.find((l) => l.includes('erasure purge done'))!) as { ms: number; tables: number; wal: string };
    console.log(`erasure purge: ${purge.tables} tables rewritten, WAL ${purge.wal}, in ${purge.ms} ms`);
    expect(purge.wal).toBe('purged');
    expect(await filesContaining(dataDir, CANARY)).toEqual([]);
    const kept = await runtime.db.pool.query(`SELECT fact FROM memory_facts WHERE senior_id = $1`, [marie]);
    expect(kept.rows.map((r) => r.fact)).toContain('Marie aime les roses anciennes.');

    await runtime.close();
    rt = null;
    expect(await filesContaining(dataDir, CANARY)).toEqual([]);
  }, 120_000);
});

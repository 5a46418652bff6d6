import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgPresenceRepository } from '../../adapters/postgres/pg-presence.repository.ts';
import type { SessionView } from '../../machines/session/session-view.ts';
import { createSeniors, migratedDatabase } from '../support/database.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

const STALE_MS = 15_000;

function view(sessionId: string, seniorId: string, turnCount: number, state = 'conversation.idle · connection.attached'): SessionView {
  return {
    sessionId,
    seniorId,
    state,
    currentFlux: null,
    connection: 'attached',
    turnCount,
    lastTurn: turnCount > 0 ? { flux: 'cache', latencyMs: 3, interrupted: false, sosReason: null } : null,
    recentLatenciesMs: [],
    window: { messages: 0, characters: 0 },
    current: null,
    startedAt: 0,
    closeReason: null,
    voice: { state: 'off', stages: null },
  };
}

/** A process's live sessions: one claimed per senior. */
async function claimAll(repo: PgPresenceRepository, processId: string, seniorIds: string[]): Promise<Array<{ sessionId: string; seniorId: string }>> {
  const sessions = seniorIds.map((seniorId) => ({ sessionId: randomUUID(), seniorId }));
  for (const s of sessions) await repo.claim(s.seniorId, s.sessionId, processId, 60_000);
  return sessions;
}

const rows = async (processId: string) =>
  (await db.pool.query<{ session_id: string; state: string; turn_count: number }>('SELECT session_id, state, turn_count FROM session_presence WHERE process_id = $1', [processId])).rows;
const beatOf = async (processId: string) =>
  (await db.pool.query<{ heartbeat_at: Date }>('SELECT heartbeat_at FROM presence_processes WHERE process_id = $1', [processId])).rows[0]?.heartbeat_at;

describe('presence heartbeat', () => {
  it('beats with its process row and rewrites only the session rows whose view changed', async () => {
    const repo = new PgPresenceRepository(db.pool);
    const sessions = await claimAll(repo, 'p-changed', await createSeniors(db, 3));
    const owned = await repo.heartbeat('p-changed', sessions.map((s) => view(s.sessionId, s.seniorId, 1)), STALE_MS);
    expect([...owned.keys()].sort()).toEqual(sessions.map((s) => s.sessionId).sort());
    expect((await rows('p-changed')).map((r) => r.turn_count)).toEqual([1, 1, 1]);

    // A row changed behind the repository's back stays as it is while its session's view does not change.
    const [first, second] = sessions;
    await db.pool.query(`UPDATE session_presence SET state = 'untouched' WHERE session_id = $1`, [first!.sessionId]);
    const before = await beatOf('p-changed');
    await new Promise((r) => setTimeout(r, 5));
    await repo.heartbeat('p-changed', [view(first!.sessionId, first!.seniorId, 1), view(second!.sessionId, second!.seniorId, 2), view(sessions[2]!.sessionId, sessions[2]!.seniorId, 1)], STALE_MS);
    const after = await rows('p-changed');
    expect(after.find((r) => r.session_id === first!.sessionId)).toMatchObject({ state: 'untouched', turn_count: 1 });
    expect(after.find((r) => r.session_id === second!.sessionId)).toMatchObject({ turn_count: 2 });
    expect((await beatOf('p-changed'))!.getTime()).toBeGreaterThan(before!.getTime());

    await repo.heartbeat('p-changed', [view(first!.sessionId, first!.seniorId, 3, 'conversation.turn.agent · connection.attached')], STALE_MS);
    expect((await rows('p-changed')).find((r) => r.session_id === first!.sessionId)).toMatchObject({ state: 'conversation.turn.agent · connection.attached', turn_count: 3 });
  });

  // 1,100 seniors created and claimed one by one first: 3 s alone, past the suite's 30 s beside a second
  // suite (load 12–22). The subject is that every view is written, not how soon.
  it('writes more changed views than one statement takes, all of them', async () => {
    const repo = new PgPresenceRepository(db.pool);
    const sessions = await claimAll(repo, 'p-many', await createSeniors(db, 1_100));
    const owned = await repo.heartbeat('p-many', sessions.map((s) => view(s.sessionId, s.seniorId, 7)), STALE_MS);
    expect(owned.size).toBe(1_100);
    const counts = await db.pool.query<{ turn_count: number; n: number }>('SELECT turn_count, count(*)::int AS n FROM session_presence WHERE process_id = $1 GROUP BY turn_count', ['p-many']);
    expect(counts.rows).toEqual([{ turn_count: 7, n: 1_100 }]);
  }, 120_000);

  it('removes a silent process with its sessions, unlisted meanwhile; a process that comes back finds them gone', async () => {
    const [x, y] = await createSeniors(db, 2);
    const silent = new PgPresenceRepository(db.pool);
    const live = new PgPresenceRepository(db.pool);
    const [gone] = await claimAll(silent, 'p-silent', [x!]);
    const [kept] = await claimAll(live, 'p-live', [y!]);
    await db.pool.query(`UPDATE presence_processes SET heartbeat_at = now() - interval '1 hour' WHERE process_id = 'p-silent'`);

    const listed = (await live.list(STALE_MS)).map((r) => r.sessionId);
    expect(listed).toContain(kept!.sessionId);
    expect(listed).not.toContain(gone!.sessionId);
    expect((await live.list(STALE_MS)).find((r) => r.sessionId === kept!.sessionId)).toMatchObject({ processId: 'p-live', heartbeatAt: expect.any(String) });

    expect((await live.heartbeat('p-live', [view(kept!.sessionId, y!, 1)], STALE_MS)).has(kept!.sessionId)).toBe(true);
    expect(await rows('p-silent')).toEqual([]);
    expect(await beatOf('p-silent')).toBeUndefined();
    // Its next beat: the session is not its own any more (the registry closes it as replaced).
    expect((await silent.heartbeat('p-silent', [view(gone!.sessionId, x!, 1)], STALE_MS)).has(gone!.sessionId)).toBe(false);
  });

  it('removes session rows whose process has no row', async () => {
    const [senior] = await createSeniors(db, 1);
    const orphan = randomUUID();
    await db.pool.query(`INSERT INTO session_presence (session_id, senior_id, process_id) VALUES ($1, $2, 'p-never-beat')`, [orphan, senior]);
    await new PgPresenceRepository(db.pool).heartbeat('p-sweeper', [], STALE_MS);
    expect(await rows('p-never-beat')).toEqual([]);
  });

  it('reports a takeover by another process and an operator close requested through another', async () => {
    const [taken, closed] = await createSeniors(db, 2);
    const a = new PgPresenceRepository(db.pool);
    const b = new PgPresenceRepository(db.pool);
    const [lost, asked] = await claimAll(a, 'p-a', [taken!, closed!]);
    expect(await b.claim(taken!, randomUUID(), 'p-b', 60_000)).toEqual({ sessionId: lost!.sessionId, processId: 'p-a', live: true });
    expect(await b.requestClose(asked!.sessionId)).toBe(true);

    const owned = await a.heartbeat('p-a', [view(lost!.sessionId, taken!, 1), view(asked!.sessionId, closed!, 1)], STALE_MS);
    expect(owned.has(lost!.sessionId)).toBe(false);
    expect(owned.get(asked!.sessionId)).toBe('operator');
  });

  it('a process leaving removes its row and its sessions', async () => {
    const repo = new PgPresenceRepository(db.pool);
    await claimAll(repo, 'p-leaving', await createSeniors(db, 2));
    await repo.releaseProcess('p-leaving');
    expect(await rows('p-leaving')).toEqual([]);
    expect(await beatOf('p-leaving')).toBeUndefined();
  });
});

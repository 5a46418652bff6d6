import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionClosed } from '../../machines/session/session.types.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/**
 * A kiosk whose socket closes while its `session.start` waits on the database (issue 20, item 9):
 * the session born afterwards must not stay attached to the dead socket (voice `listening`, alive up
 * to SESSION_PAUSE_MS), but lose its kiosk at once and close after KIOSK_GRACE_MS like any dropped one.
 */
const GRACE_MS = 400;
let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ agentModel: streamingModel(['Oui.']) }, { KIOSK_GRACE_MS: String(GRACE_MS) });
});
afterAll(() => rt.close());

describe('a socket closed while its start waits on the database', () => {
  it('leaves no ghost: the session is born detached and closes as disconnected after the grace period', { timeout: 60_000 }, async () => {
    const seniorId = rt.seed!.seniorId;
    const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
    // The embedded database serves one connection's transaction at a time: holding one open holds the start.
    const held = await rt.db.pool.connect();
    try {
      await held.query('BEGIN');
      await held.query('SELECT 1');
      kiosk.send({ type: 'session.start' });
      kiosk.socket.terminate();
      // The server has seen the socket go while the start still waits.
      await expect.poll(() => rt.app.websocketServer.clients.size).toBe(0);
      expect(rt.registry.get(seniorId)).toBeUndefined();
    } finally {
      await held.query('COMMIT');
      held.release();
    }
    const closed = new Promise<SessionClosed>((resolve) => rt.registry.onSessionClosed(resolve));
    await expect.poll(() => rt.registry.get(seniorId)).toBeDefined();
    const session = rt.registry.get(seniorId)!;
    // Nobody holds the session: it waits for a resume, as a session whose socket just dropped.
    expect(session.link).toBeNull();
    expect(session.actor.getSnapshot().value).toMatchObject({ live: { connection: 'detached' } });
    // And with no resume, it closes once the grace period is over (not at the pause, an hour later).
    expect(await closed).toMatchObject({ sessionId: session.sessionId, reason: 'disconnected' });
    expect(rt.registry.get(seniorId)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { redactContext, redactEvent } from '../../machines/session/session-view.ts';
import type { SessionContext } from '../../machines/session/session.types.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { streamingModel } from '../support/models.ts';
import { KIOSK_TOKEN, startTestRuntime } from '../support/runtime.ts';

const CANARY = 'hibou-canari-5521';

describe('Stately inspector feed (npm run dev:inspect)', () => {
  it('inspects every session actor; sanitized as the inspector is, no event or context carries conversation text', async () => {
    const events: InspectionEvent[] = [];
    const rt = await startTestRuntime({ agentModel: streamingModel([`Réponse ${CANARY}.`]), inspect: (e) => events.push(e) });
    try {
      const kiosk = await KioskClient.connect(rt.wsUrl, KIOSK_TOKEN);
      const ready = await kiosk.start();
      await kiosk.turn('i1', `je dis ${CANARY}`);
      kiosk.send({ type: 'session.end' });
      await kiosk.next('session.closed');
      kiosk.close();

      const turn = events.find((e) => e.type === '@xstate.event' && e.event.type === 'TURN');
      expect(turn).toBeDefined();
      expect(JSON.stringify(turn)).toContain(CANARY);
      const contextOf = (e: InspectionEvent) => (e.type === '@xstate.snapshot' ? (e.snapshot as { context?: SessionContext }).context : undefined);
      expect(events.filter((e) => contextOf(e)?.sessionId === ready.sessionId).length).toBeGreaterThan(2);

      // What dev:inspect hands the Stately inspector: its sanitizeEvent and sanitizeContext.
      const sanitized = events.map((e) => {
        if (e.type === '@xstate.event') return redactEvent(e.event as { type: string });
        const context = contextOf(e);
        return context?.sessionId ? redactContext(context) : null;
      });
      const text = JSON.stringify(sanitized);
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain('je dis');
      expect(redactEvent({ type: 'TURN', turnId: 'i1', transcript: `je dis ${CANARY}` })).toEqual({ type: 'TURN', turnId: 'i1', transcriptLength: `je dis ${CANARY}`.length });
    } finally {
      await rt.close();
    }
  });
});

import { createWebSocketInspector } from '@statelyai/inspect';
import { createInspectorServer } from '@statelyai/inspect/server';
import type { AnyEventObject } from 'xstate';
import { redactContext, redactEvent } from '../machines/session-view.ts';
import type { SessionContext } from '../machines/session.machine.ts';
import { exitOnStartFailure, main } from './main.ts';

/**
 * `npm run dev:inspect`: the runtime with every session actor sent to the Stately inspector
 * through a local relay. Context and events are redacted exactly as for operators: the
 * inspector shows the machine, its states and timings, never a word of the conversation.
 */
const port = Number(process.env.INSPECT_PORT ?? 8091);
createInspectorServer({ port, autoOpen: false });
const inspector = createWebSocketInspector({
  url: `ws://localhost:${port}`,
  sanitizeContext: (context) => (typeof context.sessionId === 'string' ? redactContext(context as SessionContext) : {}) as Record<string, unknown>,
  sanitizeEvent: (event: AnyEventObject) => redactEvent(event),
});

main({ inspect: (event) => inspector.inspect.next?.(event) }, [`  Stately inspector: http://localhost:${port}  (relay for every session actor; context and events redacted)`]).catch(exitOnStartFailure);

import type { createInspector } from '@statelyai/inspect';
import type { AnyEventObject } from 'xstate';
import { redactContext, redactEvent } from '../../machines/session/session-view.ts';
import type { SessionContext } from '../../machines/session/session.types.ts';

type InspectorOptions = NonNullable<Parameters<typeof createInspector>[1]>;
type StatelyEvent = Parameters<NonNullable<InspectorOptions['serialize']>>[0];

/** Snapshot fields the inspector is shown as they are: states and the (already redacted) context. */
const SHOWN = new Set(['status', 'value', 'context', 'tags', 'children']);
/**
 * Shown only as present: an invoked actor's input, output and error carry the conversation (recall's
 * transcript, the agent's window and facts, a cached reply), and its snapshot has no context to redact.
 */
const HIDDEN = new Set(['input', 'output', 'error']);

function redactSnapshot(snapshot: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(snapshot)) {
    if (SHOWN.has(key)) out[key] = value;
    else if (HIDDEN.has(key) && value !== undefined) out[key] = '[redacted]';
  }
  return out;
}

/**
 * What `npm run dev:inspect` hands `createWebSocketInspector`: the Stately inspector is shown context
 * and events redacted exactly as operators see them — states, ids, counts, lengths and timings — and
 * no invoked actor's input or output. Only the session actors have a context (the others: undefined).
 */
export const inspectorRedaction = {
  sanitizeContext: (context: Record<string, unknown> | undefined) => (typeof context?.sessionId === 'string' ? redactContext(context as unknown as SessionContext) : {}) as Record<string, unknown>,
  sanitizeEvent: (event: AnyEventObject) => redactEvent(event),
  serialize: (event: StatelyEvent): StatelyEvent => ('snapshot' in event ? { ...event, snapshot: redactSnapshot(event.snapshot as Record<string, unknown>) } : event) as StatelyEvent,
} satisfies InspectorOptions;

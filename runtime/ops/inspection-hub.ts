import type { InspectionEvent } from 'xstate';
import { sessionView, type SessionView } from '../../machines/session-view.ts';
import type { SessionContext } from '../../machines/session.machine.ts';

export type OpsEvent = { type: 'session.update'; session: SessionView } | { type: 'session.closed'; sessionId: string; reason: string | null };

/**
 * Receives XState's inspection events of every session actor and hands subscribers the
 * redacted view of each root actor's new snapshot — never its context as is. Only state
 * changes are published: a snapshot whose view is unchanged (e.g. an ignored event) is not.
 */
export class InspectionHub {
  private readonly subscribers = new Set<(event: OpsEvent) => void>();
  private readonly lastState = new Map<string, string>();
  /** Also handed every raw inspection event (the Stately inspector in development). */
  forward: ((event: InspectionEvent) => void) | null = null;

  readonly observe = (event: InspectionEvent): void => {
    this.forward?.(event);
    // Every turn of every session passes here: no view is built while nobody watches.
    if (this.subscribers.size === 0) return;
    // Session actors only: their invoked children (agent, recall) have snapshots of their own.
    if (event.type !== '@xstate.snapshot' || event.actorRef.sessionId !== event.rootId) return;
    const snapshot = event.snapshot as unknown as { value: unknown; status: string; context?: SessionContext };
    if (!snapshot.context?.sessionId) return;
    const view = sessionView(snapshot as { value: unknown; status: string; context: SessionContext });
    const key = `${view.state}|${view.turnCount}|${view.current?.chunks ?? -1}|${view.connection}`;
    if (this.lastState.get(view.sessionId) === key) return;
    this.lastState.set(view.sessionId, key);
    const out: OpsEvent = snapshot.status === 'active' ? { type: 'session.update', session: view } : { type: 'session.closed', sessionId: view.sessionId, reason: view.closeReason };
    if (out.type === 'session.closed') this.lastState.delete(view.sessionId);
    for (const subscriber of this.subscribers) subscriber(out);
  };

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  subscribe(subscriber: (event: OpsEvent) => void): () => void {
    // States seen while nobody watched are stale: the first subscriber starts from the `hello` list.
    if (this.subscribers.size === 0) this.lastState.clear();
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }
}

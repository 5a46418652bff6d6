import type { InspectionEvent } from 'xstate';
import { sessionView, type SessionView } from '../../machines/session/session-view.ts';
import type { SessionContext } from '../../machines/session/session.types.ts';

export type OpsEvent = { type: 'session.update'; session: SessionView } | { type: 'session.closed'; sessionId: string; reason: string | null };

/** Whether anyone receives an observer's events right now, and a way to hear when that changes. */
export interface Watching {
  active(): boolean;
  onChange(listener: (active: boolean) => void): () => void;
}

/**
 * An inspection observer that may say whether anyone is watching: the session registry attaches it to
 * the session actors only while someone is. With an observer attached, XState builds inspection events
 * at every event, microstep, action and snapshot of every session — a share of each CacheFlux turn.
 */
export type InspectionObserver = ((event: InspectionEvent) => void) & { readonly watching?: Watching };

/**
 * Receives XState's inspection events of every session actor and hands subscribers the
 * redacted view of each root actor's new snapshot — never its context as is. Only state
 * changes are published: a snapshot whose view is unchanged (e.g. an ignored event) is not.
 */
export class InspectionHub {
  private readonly subscribers = new Set<(event: OpsEvent) => void>();
  private readonly lastState = new Map<string, string>();
  private readonly watchListeners = new Set<(active: boolean) => void>();
  private forwardTo: ((event: InspectionEvent) => void) | null = null;
  private wasWatched = false;

  /** Watched while an ops stream is subscribed or a forward (the Stately inspector, a bench probe) is set. */
  private readonly watching: Watching = {
    active: () => this.subscribers.size > 0 || this.forwardTo !== null,
    onChange: (listener) => {
      this.watchListeners.add(listener);
      return () => this.watchListeners.delete(listener);
    },
  };

  readonly observe: InspectionObserver = Object.assign((event: InspectionEvent) => this.receive(event), { watching: this.watching });

  /** Also handed every raw inspection event (the Stately inspector in development). */
  get forward(): ((event: InspectionEvent) => void) | null {
    return this.forwardTo;
  }

  set forward(forward: ((event: InspectionEvent) => void) | null) {
    this.forwardTo = forward;
    this.watchChanged();
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  subscribe(subscriber: (event: OpsEvent) => void): () => void {
    // States seen while nobody watched are stale: the first subscriber starts from the `hello` list.
    if (this.subscribers.size === 0) this.lastState.clear();
    this.subscribers.add(subscriber);
    this.watchChanged();
    return () => {
      this.subscribers.delete(subscriber);
      this.watchChanged();
    };
  }

  private receive(event: InspectionEvent): void {
    this.forwardTo?.(event);
    if (this.subscribers.size === 0) return;
    // Session actors only: their invoked children (agent, recall) have snapshots of their own.
    if (event.type !== '@xstate.snapshot' || event.actorRef.sessionId !== event.rootId) return;
    const snapshot = event.snapshot as unknown as { value: unknown; status: string; context?: SessionContext };
    if (!snapshot.context?.sessionId) return;
    const view = sessionView(snapshot as { value: unknown; status: string; context: SessionContext });
    // The stage timings too: a turn's timings can change while the voice state stays `speaking` (an SOS line over a reply).
    const stages = view.voice.stages;
    const key = `${view.state}|${view.turnCount}|${view.current?.chunks ?? -1}|${view.connection}|${stages ? `${stages.turnId},${stages.firstTokenMs},${stages.firstAudioMs}` : ''}`;
    if (this.lastState.get(view.sessionId) === key) return;
    this.lastState.set(view.sessionId, key);
    const out: OpsEvent = snapshot.status === 'active' ? { type: 'session.update', session: view } : { type: 'session.closed', sessionId: view.sessionId, reason: view.closeReason };
    if (out.type === 'session.closed') this.lastState.delete(view.sessionId);
    for (const subscriber of this.subscribers) subscriber(out);
  }

  private watchChanged(): void {
    const watched = this.watching.active();
    if (watched === this.wasWatched) return;
    this.wasWatched = watched;
    for (const listener of this.watchListeners) listener(watched);
  }
}

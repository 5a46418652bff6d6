/** A minimal typed event emitter: browsers and Node alike, no dependency. */
export class Emitter<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(value: never) => void>>();
  readonly #onListenerError: (err: unknown, event: keyof Events) => void;

  constructor(onListenerError: (err: unknown, event: keyof Events) => void) {
    this.#onListenerError = onListenerError;
  }

  /** Calls `listener` on each `event`; returns the function that stops it. */
  on<E extends keyof Events>(event: E, listener: (value: Events[E]) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener as (value: never) => void);
    return () => void set.delete(listener as (value: never) => void);
  }

  /** The next `event`, once. */
  once<E extends keyof Events>(event: E, listener: (value: Events[E]) => void): () => void {
    const off = this.on(event, (value) => {
      off();
      listener(value);
    });
    return off;
  }

  /** A listener that throws must not take the client's socket handler (and a Node process) down with it. */
  emit<E extends keyof Events>(event: E, value: Events[E]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as (value: Events[E]) => void)(value);
      } catch (err) {
        this.#onListenerError(err, event);
      }
    }
  }
}

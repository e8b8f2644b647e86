/**
 * A minimal typed event emitter: a throwing listener never breaks the runtime, and no
 * MaxListeners warnings for hosts with many subscribers. Lean per instance, because every
 * server has one: listeners live in copy-on-write arrays (a subscription during an emit waits
 * for the next one), created only for events someone listens to, and one `forward` hook lets a
 * supervisor take every event of a server without a subscription per event.
 */
type Listener = (payload: never) => void;

export class Emitter<Events extends Record<string, unknown>> {
  private listeners: Partial<Record<keyof Events, readonly Listener[]>> = {};
  private forwardTo: (<K extends keyof Events>(event: K, payload: Events[K]) => void) | undefined;

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    this.listeners[event] = [...(this.listeners[event] ?? []), listener];
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): void {
    const current = this.listeners[event];
    if (!current) return;
    const rest = current.filter((l) => l !== listener);
    if (rest.length > 0) this.listeners[event] = rest;
    else delete this.listeners[event];
  }

  /** Every event, before its own listeners (one hook per emitter: the supervisor's). */
  forward(hook: <K extends keyof Events>(event: K, payload: Events[K]) => void): void {
    this.forwardTo = hook;
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    // The supervisor's hook first, as when it subscribed before anyone else.
    const hook = this.forwardTo;
    if (hook) {
      try {
        hook(event, payload);
      } catch (error) {
        rethrowLater(error);
      }
    }
    const listeners = this.listeners[event];
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        (listener as (payload: Events[K]) => void)(payload);
      } catch (error) {
        rethrowLater(error);
      }
    }
  }

  hasListeners(event: keyof Events): boolean {
    return (this.listeners[event]?.length ?? 0) > 0;
  }
}

/** A throwing listener is the host's bug: surface it, but never inside the runtime's own call stack. */
function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/**
 * The listening streams of a mass start (a supervisor's `start()` of more servers than it starts at
 * once). While handshakes are still to be made, a server entering `ready` serves at once and its
 * listening stream waits (machines/connection.session.ts): each stream is a connect, a request, a
 * socket and a listener actor, and on the one core they would delay the handshakes still to come.
 * Once the handshakes are made the waiting streams open, `atOnce` at a time (a server process's
 * accept queue is not 10,000 deep). A single server (connect(), add(), a reconnect) never waits.
 */
import type { ListenTurn } from '../../machines/connection.types.js';
import { inTurns } from '../core/in-turns.js';
import type { ServerActor } from './supervised-server.js';

export class StartListenTurn implements ListenTurn {
  private holding = true;
  private readonly waiting = new Set<string>();

  holds(): boolean {
    return this.holding;
  }

  wait(server: string): void {
    this.waiting.add(server);
  }

  /** The handshakes are made: each waiting stream opens, at most `atOnce` opening at a time. */
  async release(
    actorOf: (name: string) => ServerActor | undefined,
    atOnce: number,
    until: () => boolean,
  ): Promise<void> {
    this.holding = false;
    const names = [...this.waiting];
    this.waiting.clear();
    await inTurns(
      names,
      atOnce,
      (name) => {
        const actor = actorOf(name);
        return actor && openListening(actor);
      },
      until,
    );
  }
}

/**
 * LISTEN_WANTED to a server still serving without a listener (one that left `ready` meanwhile opens
 * its stream as it enters `ready` again). Resolves once the listener is past opening (the stream
 * opened, or there is none to open), `ready` was left, or the bound requests wait for a listener passed.
 */
function openListening(actor: ServerActor): Promise<void> | undefined {
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'active' || !snapshot.matches('ready') || snapshot.context.listening) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      subscription.unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, snapshot.context.listenerOpenTimeoutMs);
    const subscription = actor.subscribe({
      next: (next) => {
        const listener = next.children.listener?.getSnapshot() as { matches(state: unknown): boolean } | undefined;
        if (!next.matches('ready') || !listener || !listener.matches({ connected: 'opening' })) done();
      },
      error: done,
      complete: done,
    });
    actor.send({ type: 'LISTEN_WANTED' });
  });
}

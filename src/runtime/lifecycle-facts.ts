/**
 * A connection's facts (machines/connection.facts.ts) reach its runtime here, one subscription
 * per connection actor (`actor.on('*')`, attached before the actor starts, so nothing is missed).
 * A move's lifecycle facts wait until its `state changed` arrives: the runtime then reports the
 * transition, and whoever reacts to the move (telemetry, the log, the catalog) reads the facts
 * that came with it (`factsOfMove`). Nothing here runs per request.
 */
import type { ConnectionFact, FactOf } from '../../machines/connection.facts.js';

/** What a runtime does with its connection's facts. */
export interface FactListener {
  /** Reports the move (the transition event); `factsOfMove(this)` are its lifecycle facts meanwhile. */
  onTransition(change: FactOf<'state changed'>): void;
  /** status() says when a failed server is tried again. */
  scheduleRevival(delayMs: number): void;
}

/** How each fact reaches the runtime: at once, or with its move. */
export const RUNTIME_REACTIONS = {
  'state changed': (runtime, fact) => runtime.onTransition(fact),
  'revival scheduled': (runtime, fact) => runtime.scheduleRevival(fact.delayMs),
} satisfies { [K in ConnectionFact['type']]?: (runtime: FactListener, fact: FactOf<K>) => void };

/** The lifecycle facts of the move under way, by runtime (rarely more than two). */
const pending = new WeakMap<object, ConnectionFact[]>();

export function factsOfMove(runtime: object): readonly ConnectionFact[] {
  return pending.get(runtime) ?? [];
}

/** One fact from the connection (or, for a crashed actor, from its runtime). */
export function tellFact(runtime: FactListener, fact: ConnectionFact): void {
  switch (fact.type) {
    case 'state changed':
      try {
        RUNTIME_REACTIONS[fact.type](runtime, fact);
      } finally {
        pending.delete(runtime);
      }
      return;
    case 'revival scheduled':
      RUNTIME_REACTIONS[fact.type](runtime, fact);
      return;
    default: {
      const facts = pending.get(runtime);
      if (facts) facts.push(fact);
      else pending.set(runtime, [fact]);
    }
  }
}

/** Follows a connection actor's facts from its first on (call it before the actor starts). */
export function followConnection(
  actor: { on(type: '*', handler: (fact: ConnectionFact) => void): unknown },
  runtime: FactListener,
): void {
  actor.on('*', (fact) => tellFact(runtime, fact));
}

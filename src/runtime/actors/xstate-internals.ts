/**
 * Every read of XState's internals, in one place. An action gets its actor as an `ActorRef`,
 * which shows neither the actor's parent nor its clock; the `Actor` behind it has both
 * (`_parent`, internal by its name; `clock`). Where either is absent the reader falls back: a
 * listener with no parent hands nothing over (its stream closes with it), a connection with no
 * clock gives its origin's keepalive the real timers. test/unit/xstate-internals.test.ts pins the
 * XState they were written for.
 */
import type { AnyActorRef } from 'xstate';
import type { ActorClock } from '../../../machines/connection-host.js';

/** The XState major these reads were written for (the test fails on another, to be checked again). */
export const XSTATE_INTERNALS_WRITTEN_FOR = 5;

/** The actor that spawned or invoked `actor` (a listener's connection), if it can be read. */
export function parentOf<Parent extends AnyActorRef = AnyActorRef>(actor: AnyActorRef): Parent | undefined {
  const parent = (actor as { _parent?: unknown })._parent;
  return typeof parent === 'object' && parent !== null && 'send' in parent ? (parent as Parent) : undefined;
}

/** The clock `actor` runs its delays on (a SimulatedClock in tests), if it can be read. */
export function clockOf(actor: AnyActorRef): ActorClock | undefined {
  const clock = (actor as { clock?: Partial<ActorClock> }).clock;
  return typeof clock?.setTimeout === 'function' && typeof clock.clearTimeout === 'function'
    ? (clock as ActorClock)
    : undefined;
}

/**
 * Finds a server's runtime from inside an actor, through the actor system it runs in. The
 * machines are provided once per process (see connection-actors.ts); each supervisor registers
 * its own runtimes under its actor system, so nothing is built per connection.
 */
import type { ServerRuntime } from '../server-runtime.js';

export type RuntimeLookup = (server: string) => ServerRuntime;

/** Keyed by the actor system object (an actor's `system`); nothing else is read from it. */
const lookups = new WeakMap<object, RuntimeLookup>();

export function registerRuntimes(system: object, lookup: RuntimeLookup): void {
  lookups.set(system, lookup);
}

export function runtimeOf(system: object, server: string): ServerRuntime {
  const lookup = lookups.get(system);
  if (!lookup) throw new Error(`no runtimes registered for the actor system of server '${server}'`);
  return lookup(server);
}

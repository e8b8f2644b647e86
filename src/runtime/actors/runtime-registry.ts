/**
 * Finds a server's host (its runtime, seen through the machines' contract) from inside an actor,
 * through the actor system it runs in. The machines are provided once per process (see
 * connection-actors.ts); each supervisor registers its own runtimes under its actor system, so
 * nothing is built per connection.
 */
import type { ConnectionHost } from '../../../machines/connection-host.js';

export type RuntimeLookup = (server: string) => ConnectionHost;

/** Keyed by the actor system object (an actor's `system`); nothing else is read from it. */
const lookups = new WeakMap<object, RuntimeLookup>();

export function registerRuntimes(system: object, lookup: RuntimeLookup): void {
  lookups.set(system, lookup);
}

export function runtimeOf(system: object, server: string): ConnectionHost {
  const lookup = lookups.get(system);
  if (!lookup) throw new Error(`no runtimes registered for the actor system of server '${server}'`);
  return lookup(server);
}

/**
 * The events client of one server's runtime (`handle.events`): the runtime seen as the narrow
 * host the events client needs (requests, notifications, its connection actor, its store).
 */
import type { AnyActorRef } from 'xstate';
import type { ServerRuntime } from '../runtime/server-runtime.js';
import { eventStoreOf, ServerEvents } from './server-events.js';

const byRuntime = new WeakMap<ServerRuntime, ServerEvents>();

export function eventsOf(runtime: ServerRuntime): ServerEvents {
  let events = byRuntime.get(runtime);
  if (events) return events;
  const warn = (error: Error) => runtime.events.emit('warning', error);
  const stored = runtime.context.stored;
  events = new ServerEvents({
    server: runtime.name,
    request: (method, params, options) => runtime.request(method, params, options),
    onNotification: (listener) => runtime.events.on('notification', listener),
    capabilities: () => runtime.session()?.capabilities,
    connection: () => runtime.system?.get(runtime.name) as AnyActorRef | undefined,
    backoff: runtime.config.restart?.backoff,
    // Keyed by the server's credential for now (docs/events.md: per principal once principals land).
    store: eventStoreOf(stored?.store, runtime.context.identity, stored?.authContext, warn),
    warn,
  });
  byRuntime.set(runtime, events);
  return events;
}

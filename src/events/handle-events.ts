/**
 * The events client of one server's runtime (`handle.events`): the runtime seen as the narrow
 * host the events client needs (requests, notifications, its connection actor, its store).
 */
import type { AnyActorRef } from 'xstate';
import type { ServerPort } from '../runtime/server-port.js';
import { eventStoreOf, ServerEvents } from './server-events.js';

const byRuntime = new WeakMap<ServerPort, ServerEvents>();

export function eventsOf(runtime: ServerPort): ServerEvents {
  let events = byRuntime.get(runtime);
  if (events) return events;
  const warn = (error: Error) => runtime.context.events.emit('warning', error);
  const stored = runtime.context.stored;
  events = new ServerEvents({
    server: runtime.context.name,
    request: (method, params, options) => runtime.request(method, params, options),
    onNotification: (listener) => runtime.context.events.on('notification', listener),
    capabilities: () => runtime.context.session()?.capabilities,
    connection: () => runtime.context.system?.get(runtime.context.name) as AnyActorRef | undefined,
    backoff: runtime.context.config.restart?.backoff,
    // Keyed by the server's credential for now (docs/events.md: per principal once principals land).
    store: eventStoreOf(stored?.store, runtime.context.identity, stored?.authContext, warn),
    warn,
  });
  byRuntime.set(runtime, events);
  return events;
}

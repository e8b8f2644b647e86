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
  const context = runtime.context;
  const warn = (error: Error) => context.events.emit('warning', error);
  const stored = context.stored;
  events = new ServerEvents({
    server: context.name,
    request: (method, params, options) => runtime.request(method, params, options),
    onNotification: (listener) => context.events.on('notification', listener),
    capabilities: () => context.session()?.capabilities,
    connection: () => context.system?.get(context.name) as AnyActorRef | undefined,
    backoff: context.config.restart?.backoff,
    // Keyed by the server's credential for now (docs/events.md: per principal once principals land).
    store: eventStoreOf(stored?.store, context.identity, stored?.authContext, warn),
    warn,
  });
  byRuntime.set(runtime, events);
  return events;
}

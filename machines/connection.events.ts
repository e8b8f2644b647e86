/**
 * The connection's events subscriptions (SEP-3415, machines/subscription.machine.ts): each is a
 * child `subscription.<n>` spawned by SUBSCRIBE, in any state, and lives as long as the connection
 * does — across reconnects, restarts and revivals (its requests wait in the request gate meanwhile).
 * A subscription that ended (closed, or terminated by the server) is stopped and forgotten.
 */
import { connectionSetup } from './connection.setup.js';

export const subscriptionHandlers = {
  SUBSCRIBE: {
    actions: connectionSetup.enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'SUBSCRIBE') return;
      enqueue.spawnChild('subscription', { id: event.id, input: event.input });
    }),
  },
  'xstate.done.actor.subscription.*': {
    actions: connectionSetup.enqueueActions(({ event, enqueue }) => {
      const id = (event as { actorId?: unknown }).actorId;
      if (typeof id === 'string') enqueue.stopChild(id);
    }),
  },
};

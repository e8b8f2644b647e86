/**
 * Whose keepalive proves a ready server alive. With `proof: 'origin'` (the default) at an origin
 * whose request sockets are shared (HTTP), the origin's one keepalive stands for all its servers
 * (src/runtime/keepalive/): the server joins it on entering `ready` and leaves it on leaving, and
 * has no keepalive actor of its own. `proof: 'server'`, stdio and a keepalive turned off get a
 * keepalive child of their own, as before (machines/keepalive.machine.ts).
 */
import { connectionSetup } from './connection.setup.js';

/** Entering `ready`: join the origin's keepalive, or spawn the server's own. */
export const startKeepalive = connectionSetup.enqueueActions(({ context, enqueue, check }) => {
  const settings = context.keepalive;
  if (settings !== false && settings.proof !== 'server' && check('origin is shared')) {
    enqueue('join origin keepalive');
    return;
  }
  enqueue.spawnChild('keepalive', { id: 'keepalive', input: { server: context.server, settings } });
});

/** Leaving `ready`: whichever it was ends (stopping a child that is not there does nothing). */
export const stopKeepalive = connectionSetup.enqueueActions(({ enqueue }) => {
  enqueue.stopChild('keepalive');
  enqueue('leave origin keepalive');
});

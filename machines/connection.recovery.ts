/**
 * Down: `reconnecting` waits for the supervisor's verdict (RESTART after a backoff, or GIVE_UP),
 * and `failed` either revives the server after a capped backoff or stays failed for good.
 */
import { announce, because, tell } from './connection.facts.js';
import { connectionSetup } from './connection.setup.js';

export const reconnecting = connectionSetup.createStateConfig({
  // Requests keep waiting (each within its own timeout) for the connection to come back.
  entry: [
    { type: 'forget session', params: { reason: 'connection lost' } },
    'report connection down',
    'tell connection down',
    'settle attempt',
    announce('reconnecting'),
  ],
  on: {
    RESTART: { target: 'connecting', actions: [tell({ type: 'restarted' }), because('restart')] },
    GIVE_UP: {
      target: 'failed',
      actions: [
        { type: 'remember give-up reason', params: ({ event }) => event },
        {
          type: 'tell',
          params: ({ event }) => ({ type: 'gave up', reason: event.reason, fatal: event.fatal === true }),
        },
        {
          type: 'note cause',
          params: ({ event }) => ({
            cause: event.fatal === true ? 'a restart cannot fix it' : 'restart budget spent',
            error: event.reason,
          }),
        },
      ],
    },
  },
});

/** The restart budget is spent, or the failure is one a restart cannot fix. */
export const failed = connectionSetup.createStateConfig({
  entry: announce('failed'),
  initial: 'deciding',
  states: {
    deciding: {
      always: [{ guard: 'may revive', target: 'waiting to revive' }, { target: 'for good' }],
    },
    // A long-running agent has nobody to restart it: try again, with a capped backoff.
    'waiting to revive': {
      entry: 'tell revival scheduled',
      after: {
        'revive delay': { target: '#connection.connecting', actions: ['count revival', because('reviving')] },
      },
    },
    'for good': {
      entry: {
        type: 'reject waiting requests',
        params: ({ context }) => ({ reason: `the server has failed: ${context.lastError ?? 'unknown error'}` }),
      },
    },
  },
});

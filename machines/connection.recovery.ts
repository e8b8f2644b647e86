/**
 * Down: `reconnecting` waits for the verdict (RESTART after a backoff, or GIVE_UP) — its own, under
 * its restart policy (`decide restart`), or its parent's when it has none —
 * and `failed` either revives the server after a capped backoff or stays failed for good.
 *
 * Someone waiting cuts the wait short: requests held for the server (REQUESTS_WAITING) cap the
 * backoff at `waitingReconnectMs` in `reconnecting` (each attempt made early costs its share of the
 * backoff in the restart budget, so the budget lasts as long as with the long backoff), and bring
 * the first revival of `failed` forward; an idle server keeps the long backoff. Either way the attempt then waits for its origin's turn (`waiting for
 * origin`): the connections to one origin take one attempt per backoff slot between them, and the
 * others wait for its verdict.
 */
import { not } from 'xstate';
import { announce, because, tell } from './connection.facts.js';
import { connectionSetup } from './connection.setup.js';

export const reconnecting = connectionSetup.createStateConfig({
  // Requests keep waiting (each within its own timeout) for the connection to come back.
  entry: [
    { type: 'forget session', params: { reason: 'connection lost' } },
    'report connection down',
    'tell connection down',
    'settle attempt',
    // Its verdict (RESTART after the backoff, or GIVE_UP) is raised: taken after this entry.
    'decide restart',
    announce('reconnecting'),
  ],
  exit: 'cancel restart',
  initial: 'backing off',
  states: {
    // The backoff runs; the runtime says at once if requests already wait. A busy server's
    // wait is its own: waiting requests do not cut it short (they wait within their timeouts).
    'backing off': {
      entry: 'ask about waiting requests',
      on: {
        RESTART: { target: 'waiting for origin', actions: 'count attempt' },
        REQUESTS_WAITING: { guard: not('server is busy'), target: 'hurrying' },
      },
    },
    // Requests wait: the backoff is capped at `waitingReconnectMs` (the RESTART may come sooner);
    // the attempt made early costs only its share of the backoff (restart-policy.ts).
    hurrying: {
      after: { 'waiting reconnect delay': { target: 'waiting for origin', actions: 'charge hurried attempt' } },
      on: { RESTART: { target: 'waiting for origin', actions: 'count attempt' } },
    },
    'waiting for origin': {
      invoke: {
        id: 'origin',
        src: 'wait for origin',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: '#connection.connecting', actions: [tell({ type: 'restarted' }), because('restart')] },
        onError: { target: '#connection.connecting', actions: [tell({ type: 'restarted' }), because('restart')] },
      },
    },
  },
  on: {
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
    // A long-running agent has nobody to restart it: try again, with a capped backoff. Requests
    // waiting bring the first revival forward; later ones keep the revival backoff, so a server
    // down for minutes stays `failed` between attempts instead of flapping once a second.
    'waiting to revive': {
      entry: ['tell revival scheduled', 'ask about waiting requests'],
      after: { 'revive delay': 'reviving' },
      on: { REQUESTS_WAITING: { guard: 'has not revived yet', target: 'hurrying to revive' } },
    },
    // Requests wait: the revival comes within `waitingReconnectMs`.
    'hurrying to revive': {
      entry: {
        type: 'tell',
        params: ({ context }) => ({ type: 'revival scheduled', delayMs: context.waitingReconnectMs }),
      },
      after: { 'waiting reconnect delay': 'reviving' },
    },
    reviving: {
      invoke: {
        id: 'origin',
        src: 'wait for origin',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: '#connection.connecting', actions: ['count revival', because('reviving')] },
        onError: { target: '#connection.connecting', actions: ['count revival', because('reviving')] },
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

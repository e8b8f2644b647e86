/**
 * Keeping the session: `ready` (requests go straight to the transport), `probing` when a sign is
 * ambiguous, `expired` then one coalesced handshake (`reinitializing`; modern: one discovery), and
 * `authorizing` when requests are refused for want of credentials.
 */
import { announce, because, becauseActorFailed, becauseOf, tell } from './connection.facts.js';
import {
  authorizeAfterRefusal,
  sessionInitialized,
  parkDoubtfulRequests,
  probeFailure,
  rememberActorError,
  rememberEventError,
  rememberLostConnection,
} from './connection.failures.js';
import { startKeepalive, stopKeepalive } from './connection.keepalive.js';
import { connectionSetup } from './connection.setup.js';

/** The session is gone (a 404 on a request that carried it, or a 400 naming it). */
const sessionExpired = {
  type: 'note cause',
  params: ({ event }: { event: { evidence?: string | undefined } }) => ({
    cause: `session expired (${event.evidence ?? 'HTTP 404'})`,
    error: undefined,
  }),
} as const;
const isCurrentSession = {
  type: 'is current session',
  params: ({ event }: { event: { generation: number } }) => event,
} as const;
/** `handle.reconnect()`: a new transport and a new session. */
export const reconnectActions = [
  { type: 'forget session', params: { reason: 'reconnect requested' } },
  'forget revivals',
  'replace transport',
  because('reconnect requested'),
] as const;

/**
 * The listener child lives while there is something to listen to: spawned as `ready` is entered
 * (it opens the stream, or the modern listen), stopped when it finds nothing to listen to
 * (NOTHING_TO_LISTEN: no GET stream here, or a modern server with nothing asked for; an idle
 * actor costs ~2.6 KB) and when `ready` is left; LISTEN_WANTED (the runtime: what to listen for
 * changed) spawns it again, or tells the one there. A listener whose stream opened hands it over
 * and asks to be stopped (NOTHING_TO_LISTEN); the stream's end comes back as LISTEN_WANTED with
 * its cursor (`resume`), and a new listener decides: resume, or give up.
 */
const startListener = [
  connectionSetup.spawnChild('listener', {
    id: 'listener',
    // A handed-over stream that ended comes back with its cursor: the new listener decides from there.
    input: ({ context, event }) => ({
      server: context.server,
      resume: event.type === 'LISTEN_WANTED' ? event.resume : undefined,
    }),
  }),
  connectionSetup.assign({ listening: true }),
] as const;
/**
 * Entering `ready`: the listener opens the stream (requests wait for it, bounded), or, in a mass start
 * that still has handshakes to make, the server serves at once and its stream waits for the start's
 * turn (LISTEN_WANTED): 10,000 listening GETs (a connect, a socket, an actor each) would otherwise
 * compete on the one core with the handshakes still to come.
 */
const openListenerOrWait = connectionSetup.enqueueActions(({ enqueue, check }) => {
  if (!check('listening waits')) return void startListener.forEach((action) => enqueue(action));
  enqueue('wait for listen turn');
  enqueue.raise({ type: 'LISTENER_SETTLED' });
});
const stopListener = [connectionSetup.stopChild('listener'), connectionSetup.assign({ listening: false })] as const;
const isListening = ({ context }: { context: { listening: boolean } }) => context.listening;

export const ready = connectionSetup.createStateConfig({
  // Serving again clears the last failure before the move is told (a listener reads status() in it):
  // each way in clears it (a new session or discovery: `remember session`; a probe or an authorization:
  // `forget error`), so no entry action copies the context again at each of 10,000 starts.
  // The keepalive: its origin's (joined, no actor per server) or a child of its own (connection.setup.ts).
  entry: [announce('ready'), startKeepalive],
  exit: [stopKeepalive, ...stopListener, 'stop followed stream'],
  initial: 'opening listener',
  states: {
    // Server-to-client requests are dropped by servers with no open stream, so requests
    // wait (bounded) until the listener opened or turned out to be unavailable.
    'opening listener': {
      // Spawned after the keepalive: a child removed last leaves `children` a fast object, not a dictionary (~0.26 KB).
      entry: openListenerOrWait,
      on: { LISTENER_SETTLED: 'serving' },
      after: { 'listener open timeout': 'serving' },
    },
    serving: {
      entry: ['release requests', 'settle attempt'],
      exit: 'hold requests',
    },
  },
  after: { 'session proven delay': { actions: ['reset restart budget', 'report session proven', 'forget revivals'] } },
  on: {
    LISTEN_WANTED: [
      {
        guard: isListening,
        actions: connectionSetup.sendTo('listener', { type: 'SUBSCRIPTIONS_CHANGED' }),
      },
      { actions: startListener },
    ],
    NOTHING_TO_LISTEN: { actions: stopListener },
    SESSION_EXPIRED: { guard: isCurrentSession, target: 'expired', actions: sessionExpired },
    LISTENER_REFUSED_SESSION: {
      target: 'expired',
      actions: {
        type: 'note cause',
        params: ({ event }) => ({
          cause: `session expired (the listening stream was refused: HTTP ${event.status})`,
          error: undefined,
        }),
      },
    },
    SESSION_IN_DOUBT: {
      guard: isCurrentSession,
      target: 'probing',
      actions: {
        type: 'note cause',
        params: ({ event }) => ({ cause: `checking the session (${event.evidence})`, error: undefined }),
      },
    },
    SERVER_UNREACHABLE: { target: 'reconnecting', actions: [rememberEventError, becauseOf('server unreachable')] },
    AUTHORIZATION_REQUIRED: {
      target: 'authorizing',
      actions: [rememberEventError, becauseOf('authorization required')],
    },
    CONNECTION_LOST: { target: 'reconnecting', actions: [rememberLostConnection, becauseOf('connection lost')] },
    LISTENER_LOST: { target: 'reconnecting', actions: [rememberEventError, becauseOf('listening stream lost')] },
  },
});

// One probe on the session decides what an ambiguous sign meant; requests wait meanwhile.
export const probing = connectionSetup.createStateConfig({
  entry: [tell({ type: 'session in doubt' }), announce('probing')],
  invoke: {
    id: 'probe',
    src: 'probe session',
    input: ({ context }) => ({ server: context.server }),
    onDone: [
      {
        guard: { type: 'session is alive', params: ({ event }) => event.output },
        target: 'ready',
        actions: [
          { type: 'settle doubtful requests', params: { lost: false } },
          'forget error',
          tell({ type: 'session confirmed' }),
          because('session alive'),
        ],
      },
      {
        guard: { type: 'session is lost', params: ({ event }) => event.output },
        target: 'expired',
        actions: [
          parkDoubtfulRequests,
          {
            type: 'note cause',
            params: ({ event }) => ({
              cause: `session expired (${probeFailure(event.output).error})`,
              error: probeFailure(event.output).error,
            }),
          },
        ],
      },
      {
        guard: { type: 'probe was refused', params: ({ event }) => event.output },
        target: 'authorizing',
        actions: [
          parkDoubtfulRequests,
          { type: 'remember error', params: ({ event }) => probeFailure(event.output) },
          {
            type: 'note cause',
            params: ({ event }) => ({ cause: 'authorization required', error: probeFailure(event.output).error }),
          },
        ],
      },
      {
        target: 'reconnecting',
        actions: [
          parkDoubtfulRequests,
          { type: 'remember error', params: ({ event }) => probeFailure(event.output) },
          {
            type: 'note cause',
            params: ({ event }) => ({ cause: 'server unreachable', error: probeFailure(event.output).error }),
          },
        ],
      },
    ],
    onError: {
      target: 'reconnecting',
      actions: [parkDoubtfulRequests, rememberActorError, becauseActorFailed('probe failed')],
    },
  },
  on: {
    SESSION_EXPIRED: { guard: isCurrentSession, target: 'expired', actions: [parkDoubtfulRequests, sessionExpired] },
    SERVER_UNREACHABLE: {
      target: 'reconnecting',
      actions: [parkDoubtfulRequests, rememberEventError, becauseOf('server unreachable')],
    },
    CONNECTION_LOST: {
      target: 'reconnecting',
      actions: [parkDoubtfulRequests, rememberLostConnection, becauseOf('connection lost')],
    },
    // Not left to the root's RECONNECT: the doubtful requests would wait on, settled by no verdict.
    RECONNECT: { target: 'connecting', actions: [parkDoubtfulRequests, ...reconnectActions] },
  },
});

export const expired = connectionSetup.createStateConfig({
  // The session is gone: forget it, then one coalesced handshake (modern: one discovery). Parked
  // requests wait for it. The next state is reported with the same cause.
  entry: [{ type: 'forget session', params: { reason: 'expired' } }, announce('expired')],
  always: [{ guard: 'era is modern', target: 'discovering' }, { target: 'reinitializing' }],
});

export const reinitializing = connectionSetup.createStateConfig({
  entry: announce('reinitializing'),
  invoke: {
    id: 'handshake',
    src: 'initialize session',
    input: ({ context }) => ({ server: context.server }),
    onDone: sessionInitialized,
    onError: [
      authorizeAfterRefusal,
      // No loop: a handshake that fails goes through the restart policy.
      { target: 'reconnecting', actions: [rememberActorError, becauseActorFailed('handshake failed')] },
    ],
  },
  on: {
    CONNECTION_LOST: { target: 'reconnecting', actions: [rememberLostConnection, becauseOf('connection lost')] },
  },
});

export const authorizing = connectionSetup.createStateConfig({
  // One authorization for every refused request; requests are held meanwhile.
  entry: [tell({ type: 'authorization required' }), announce('authorizing')],
  invoke: {
    id: 'authorize',
    src: 'authorize',
    input: ({ context }) => ({ server: context.server }),
    onDone: [
      {
        guard: 'has session',
        target: 'ready',
        actions: ['forget error', tell({ type: 'authorized', sessionKept: true }), because('authorized')],
      },
      { target: 'connecting', actions: [tell({ type: 'authorized', sessionKept: false }), because('authorized')] },
    ],
    onError: {
      target: 'reconnecting',
      actions: [rememberActorError, 'fail parked requests', becauseActorFailed('authorize failed')],
    },
  },
  on: {
    CONNECTION_LOST: { target: 'reconnecting', actions: [rememberLostConnection, becauseOf('connection lost')] },
  },
});

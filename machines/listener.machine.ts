/**
 * The listener: the server-to-client stream (the Streamable HTTP GET). It opens the stream,
 * keeps the last event id, reconnects with `Last-Event-ID` after the server's `retry` delay (or
 * a growing backoff), and gives up after too many reconnects that brought no new event.
 * A server that offers no listening stream (405/404/406/400/409) is not an error; but a 400 or
 * 404 to a reopening stream that had been open on this session is evidence the server lost the
 * session (it restarted), and the connection is told.
 */
import { assign, sendParent, setup, type CallbackActorLogic, type EventObject } from 'xstate';
import { mayReconnectStream, streamReconnectDelay } from './stream-policy.js';

export interface ListenerInput {
  server: string;
}

export interface FollowStreamInput {
  server: string;
  lastEventId: string | undefined;
}

export interface ListenerContext {
  server: string;
  lastEventId: string | undefined;
  retryMs: number | undefined;
  /** Reconnects in a row that delivered no new event. */
  stalledAttempts: number;
  progressed: boolean;
  /** The stream has been open on this session: a 400/404 from now on means the session is gone. */
  opened: boolean;
  unavailableStatus: number | undefined;
  lastError: string | undefined;
}

export type ListenerEvent =
  | { type: 'STREAM_OPENED' }
  | { type: 'STREAM_UNAVAILABLE'; status: number }
  | { type: 'EVENT_ID'; id: string }
  | { type: 'RETRY'; ms: number }
  | { type: 'STREAM_ENDED' }
  | { type: 'STREAM_FAILED'; error: string };

/** What the listener tells the connection. */
export type ListenerReport =
  | { type: 'LISTENER_SETTLED' }
  | { type: 'LISTENER_LOST'; error: string }
  /** The stream had been open, and reopening it was answered 400/404: the server no longer knows the session. */
  | { type: 'LISTENER_REFUSED_SESSION'; status: number };

/** Statuses that, on a stream that had been open, say the session is gone. */
const SESSION_REFUSED_STATUSES = [400, 404];

export const listenerMachine = setup({
  types: {
    input: {} as ListenerInput,
    context: {} as ListenerContext,
    events: {} as ListenerEvent,
  },
  actors: {
    // Provided by src/runtime/actors: opens the stream and reports STREAM_* / EVENT_ID / RETRY.
    'follow stream': {} as CallbackActorLogic<EventObject, FollowStreamInput>,
  },
  actions: {
    'remember event id': assign((_, params: { id: string }) => ({ lastEventId: params.id, progressed: true })),
    'remember retry': assign((_, params: { ms: number }) => ({ retryMs: params.ms })),
    'remember unavailable status': assign((_, params: { status: number }) => ({ unavailableStatus: params.status })),
    'remember error': assign((_, params: { error: string }) => ({ lastError: params.error })),
    'forget error': assign({ lastError: undefined }),
    'count reconnect attempt': assign({
      stalledAttempts: ({ context }) => (context.progressed ? 0 : context.stalledAttempts + 1),
      progressed: false,
    }),
    'remember opened': assign({ opened: true }),
    'report settled': sendParent({ type: 'LISTENER_SETTLED' } satisfies ListenerReport),
    'report refused session': sendParent(({ context }): ListenerReport => ({
      type: 'LISTENER_REFUSED_SESSION',
      status: context.unavailableStatus ?? 0,
    })),
    'report lost': sendParent(
      ({ context }) =>
        ({
          type: 'LISTENER_LOST',
          error:
            context.lastError ??
            `the listening stream ended ${context.stalledAttempts} times in a row without a new event`,
        }) satisfies ListenerReport,
    ),
  },
  guards: {
    'may reconnect': ({ context }) => mayReconnectStream(context.stalledAttempts),
    'refuses the session': ({ context }, params: { status: number }) =>
      context.opened && SESSION_REFUSED_STATUSES.includes(params.status),
  },
  delays: {
    'reconnect delay': ({ context }) => streamReconnectDelay(context.retryMs, context.stalledAttempts),
  },
}).createMachine({
  id: 'listener',
  context: ({ input }) => ({
    server: input.server,
    lastEventId: undefined,
    retryMs: undefined,
    stalledAttempts: 0,
    // The first end is not a stall: the first reconnect waits initialDelayMs like any other.
    progressed: true,
    opened: false,
    unavailableStatus: undefined,
    lastError: undefined,
  }),
  initial: 'connected',
  states: {
    connected: {
      invoke: {
        id: 'stream',
        src: 'follow stream',
        input: ({ context }) => ({ server: context.server, lastEventId: context.lastEventId }),
      },
      initial: 'opening',
      states: {
        opening: {
          on: {
            STREAM_OPENED: { target: 'streaming', actions: ['forget error', 'remember opened', 'report settled'] },
            STREAM_FAILED: {
              target: '#listener.ended',
              actions: [{ type: 'remember error', params: ({ event }) => event }, 'report settled'],
            },
          },
        },
        streaming: {
          on: {
            STREAM_FAILED: {
              target: '#listener.ended',
              actions: { type: 'remember error', params: ({ event }) => event },
            },
          },
        },
      },
      on: {
        STREAM_UNAVAILABLE: [
          {
            guard: { type: 'refuses the session', params: ({ event }) => event },
            target: 'session refused',
            actions: { type: 'remember unavailable status', params: ({ event }) => event },
          },
          {
            target: 'unavailable',
            actions: [{ type: 'remember unavailable status', params: ({ event }) => event }, 'report settled'],
          },
        ],
        EVENT_ID: { actions: { type: 'remember event id', params: ({ event }) => event } },
        RETRY: { actions: { type: 'remember retry', params: ({ event }) => event } },
        STREAM_ENDED: { target: 'ended' },
      },
    },
    ended: {
      entry: 'count reconnect attempt',
      always: [{ guard: 'may reconnect', target: 'waiting' }, { target: 'gave up' }],
    },
    waiting: {
      after: { 'reconnect delay': 'connected' },
    },
    /** The server offers no listening stream; nothing more to do. */
    unavailable: {},
    /** The server restarted: the connection re-initializes, and a new listener starts with the new session. */
    'session refused': {
      entry: 'report refused session',
    },
    'gave up': {
      entry: 'report lost',
    },
  },
});

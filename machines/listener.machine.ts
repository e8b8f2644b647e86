/**
 * The listener: the server-to-client stream (the Streamable HTTP GET). It opens the stream,
 * keeps the last event id, reconnects with `Last-Event-ID` after the server's `retry` delay (or
 * a growing backoff), and gives up after too many reconnects that brought no new event.
 * A server that offers no listening stream (405/404/406/400/409) is not an error.
 */
import { assign, sendParent, setup, type ActorLogic, type ActorSystem, type AnyEventObject } from 'xstate';
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
export type ListenerReport = { type: 'LISTENER_SETTLED' } | { type: 'LISTENER_LOST'; error: string };

export const listenerMachine = setup({
  types: {
    input: {} as ListenerInput,
    context: {} as ListenerContext,
    events: {} as ListenerEvent,
  },
  actors: {
    // Provided by src/actors: opens the stream and reports STREAM_* / EVENT_ID / RETRY.
    'follow stream': {} as ActorLogic<any, AnyEventObject, FollowStreamInput, ActorSystem<any>>,
  },
  actions: {
    'remember event id': assign({
      lastEventId: ({ event }) => (event as { id: string }).id,
      progressed: true,
    }),
    'remember retry': assign({ retryMs: ({ event }) => (event as { ms: number }).ms }),
    'remember unavailable status': assign({ unavailableStatus: ({ event }) => (event as { status: number }).status }),
    'remember error': assign({ lastError: ({ event }) => (event as { error: string }).error }),
    'forget error': assign({ lastError: undefined }),
    'count reconnect attempt': assign({
      stalledAttempts: ({ context }) => (context.progressed ? 0 : context.stalledAttempts + 1),
      progressed: false,
    }),
    'report settled': sendParent({ type: 'LISTENER_SETTLED' } satisfies ListenerReport),
    'report lost': sendParent(({ context }) => ({
      type: 'LISTENER_LOST',
      error: context.lastError ?? `the listening stream ended ${context.stalledAttempts} times in a row without a new event`,
    }) satisfies ListenerReport),
  },
  guards: {
    'may reconnect': ({ context }) => mayReconnectStream(context.stalledAttempts),
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
            STREAM_OPENED: { target: 'streaming', actions: ['forget error', 'report settled'] },
            STREAM_FAILED: { target: '#listener.ended', actions: ['remember error', 'report settled'] },
          },
        },
        streaming: {
          on: {
            STREAM_FAILED: { target: '#listener.ended', actions: 'remember error' },
          },
        },
      },
      on: {
        STREAM_UNAVAILABLE: { target: 'unavailable', actions: ['remember unavailable status', 'report settled'] },
        EVENT_ID: { actions: 'remember event id' },
        RETRY: { actions: 'remember retry' },
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
    'gave up': {
      entry: 'report lost',
    },
  },
});

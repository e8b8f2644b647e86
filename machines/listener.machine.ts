/**
 * The listener: the server-to-client stream. Legacy era: the Streamable HTTP GET. Modern era
 * (2026-07-28): a `subscriptions/listen` request, open once the server acknowledged it, re-issued
 * as a new request when it breaks (no resumption) and when the subscriptions change.
 *
 * It opens the stream, keeps the last event id, reconnects (with `Last-Event-ID` in the legacy
 * era) after the server's `retry` delay or a growing backoff (a stream that keeps ending soon
 * after it opened backs off even when each brings an event: stream-policy.ts), and gives up after
 * too many reconnects that brought no new event. A server that offers no listening stream (405/404/406/
 * 400/409; modern: nothing to listen for, or the listen declined) is not an error; but a 400 or
 * 404 to a reopening stream that had been open on this session is evidence the server lost the
 * session (it restarted), and the connection is told. A reopen that cannot reach the server
 * (connection refused, or reset while opening) is evidence the server is gone: the connection
 * is told at once instead of waiting out the backoff.
 *
 * While a stream is simply open there is nothing to decide: once it opened the listener hands it
 * over (`hand over stream`: the runtime follows it, keeping its cursor) and asks to be stopped
 * (an idle actor is ~2.6 KB per connection). When the followed stream ends or fails, the
 * connection starts a listener again with the cursor (`resume`), which decides from `ended`.
 */
import { assign, sendParent, setup } from 'xstate';
import {
  DEFAULT_STREAM_RECONNECT_POLICY,
  MAX_COUNTED_REOPENS,
  mayReconnectStream,
  streamReconnectDelay,
} from './stream-policy.js';

export interface ListenerInput {
  server: string;
  /** A stream this listener's predecessor handed over, back because it ended or failed. */
  resume?: ListenerResume | undefined;
}

/** What a followed stream carries from one open to the next: the listener's counters and what the stream said. */
export interface StreamCursor {
  lastEventId: string | undefined;
  retryMs: number | undefined;
  stalledAttempts: number;
  reopens: number;
  progressed: boolean;
}

/** A handed-over stream that ended: its cursor, whether it stayed open `stableAfterMs`, and its failure if any. */
export interface ListenerResume extends StreamCursor {
  stable: boolean;
  error: string | undefined;
}

/** What `follow stream` opens: the server's stream, resumed after `lastEventId` (legacy era). */
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
  /** Reopens in a row of a stream that did not stay open long (progress or not): the backoff floor. */
  reopens: number;
  progressed: boolean;
  /** The stream has been open on this session: a 400/404 from now on means the session is gone. */
  opened: boolean;
  unavailableStatus: number | undefined;
  lastError: string | undefined;
}

/** How an open failed at the connection level: `refused` (no connection made), `reset` (broken while opening). */
export type OpenFailure = 'refused' | 'reset';

export type ListenerEvent =
  | { type: 'STREAM_OPENED' }
  /** No listening stream here (`status` of the refused GET; none in the modern era). */
  | { type: 'STREAM_UNAVAILABLE'; status?: number | undefined }
  | { type: 'EVENT_ID'; id: string }
  /** Modern era: the listen delivered something (its acknowledgment, a notification); no event ids exist. */
  | { type: 'STREAM_PROGRESSED' }
  | { type: 'RETRY'; ms: number }
  | { type: 'STREAM_ENDED' }
  | { type: 'STREAM_FAILED'; error: string; connection?: OpenFailure | undefined }
  /** From the runtime, modern era: the subscriptions changed, the listen is issued again with the new set. */
  | { type: 'SUBSCRIPTIONS_CHANGED' };

/** What the listener tells the connection. */
export type ListenerReport =
  | { type: 'LISTENER_SETTLED' }
  | { type: 'LISTENER_LOST'; error: string }
  /** The stream had been open, and reopening it was answered 400/404: the server no longer knows the session. */
  | { type: 'LISTENER_REFUSED_SESSION'; status: number }
  /** Reopening the stream could not reach the server: the connection reconnects now. */
  | { type: 'SERVER_UNREACHABLE'; error: string }
  /**
   * Nothing for a listener to do: no listening stream here, a modern server with nothing asked
   * for, or the stream is open and handed over (the runtime follows it). Stop me.
   */
  | { type: 'NOTHING_TO_LISTEN' };

/**
 * What an event of an open stream changes in its cursor: the `remember …` actions of `connected`
 * apply it, and so does the runtime to a stream handed over (src/runtime/actors/listener-actors.ts).
 */
export function cursorChange(event: ListenerEvent): Partial<StreamCursor> | undefined {
  switch (event.type) {
    case 'EVENT_ID':
      return { lastEventId: event.id, progressed: true };
    case 'RETRY':
      return { retryMs: event.ms };
    case 'STREAM_PROGRESSED':
      return { progressed: true };
    default:
      return undefined;
  }
}

/** The events that end an open stream (`connected` → `ended`): a handed-over stream goes back to its connection on them. */
export function endsOpenStream(
  event: ListenerEvent,
): event is Extract<ListenerEvent, { type: 'STREAM_ENDED' | 'STREAM_FAILED' }> {
  return event.type === 'STREAM_ENDED' || event.type === 'STREAM_FAILED';
}

/** Statuses that, on a stream that had been open, say the session is gone. */
const SESSION_REFUSED_STATUSES = [400, 404];

export const listenerMachine = setup({
  types: {
    input: {} as ListenerInput,
    context: {} as ListenerContext,
    events: {} as ListenerEvent,
  },
  actions: {
    // Provided by src/runtime/actors: `follow stream` opens the stream and sends what happens on it
    // to this listener (STREAM_* / EVENT_ID / RETRY); `stop following` closes it, and so must the
    // provider when the listener stops (XState runs no exit action then). Not a child actor: an
    // idle connection holds its stream for hours, and an actor costs ~2 KB of it.
    'follow stream': (_, _params: FollowStreamInput) => {},
    'stop following': () => {},
    // Provided by src/runtime/actors: the open stream is followed without this listener from now
    // on; its end comes back to the connection as LISTEN_WANTED with a `resume` (this cursor).
    'hand over stream': (_, _params: StreamCursor) => {},
    'remember event id': assign((_, event: ListenerEvent) => cursorChange(event) ?? {}),
    'remember retry': assign((_, event: ListenerEvent) => cursorChange(event) ?? {}),
    'remember unavailable status': assign((_, params: { status?: number | undefined }) => ({
      unavailableStatus: params.status,
    })),
    'remember progress': assign((_, event: ListenerEvent) => cursorChange(event) ?? {}),
    'remember error': assign((_, params: { error: string }) => ({ lastError: params.error })),
    'forget error': assign({ lastError: undefined }),
    'count reconnect attempt': assign({
      stalledAttempts: ({ context }) => (context.progressed ? 0 : context.stalledAttempts + 1),
      reopens: ({ context }) => Math.min(MAX_COUNTED_REOPENS, context.reopens + 1),
      progressed: false,
    }),
    'forget reopens': assign({ reopens: 0 }),
    'remember opened': assign({ opened: true }),
    'report settled': sendParent({ type: 'LISTENER_SETTLED' } satisfies ListenerReport),
    'report nothing to listen': sendParent({ type: 'NOTHING_TO_LISTEN' } satisfies ListenerReport),
    'report refused session': sendParent(({ context }): ListenerReport => ({
      type: 'LISTENER_REFUSED_SESSION',
      status: context.unavailableStatus ?? 0,
    })),
    'report unreachable': sendParent(({ context }): ListenerReport => ({
      type: 'SERVER_UNREACHABLE',
      error: `the listening stream could not be reopened: ${context.lastError ?? 'server unreachable'}`,
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
    /** Started for a handed-over stream that ended: only its end is left to decide. */
    'resumes a followed stream': ({ context }) => context.opened,
    'may reconnect': ({ context }) => mayReconnectStream(context.stalledAttempts),
    'refuses the session': ({ context }, params: { status?: number | undefined }) =>
      context.opened && params.status !== undefined && SESSION_REFUSED_STATUSES.includes(params.status),
    /** Refused: nothing listens there. Reset while reopening a stream that had been open: the server went away. */
    'server is unreachable': ({ context }, params: { connection?: OpenFailure | undefined }) =>
      params.connection === 'refused' || (params.connection === 'reset' && context.opened),
  },
  delays: {
    'reconnect delay': ({ context }) =>
      streamReconnectDelay(context.retryMs, context.stalledAttempts, DEFAULT_STREAM_RECONNECT_POLICY, context.reopens),
    'stream stable delay': () => DEFAULT_STREAM_RECONNECT_POLICY.stableAfterMs,
  },
}).createMachine({
  id: 'listener',
  context: ({ input: { server, resume } }) => ({
    server,
    lastEventId: resume?.lastEventId,
    retryMs: resume?.retryMs,
    stalledAttempts: resume?.stalledAttempts ?? 0,
    // A stream open long enough to be healthy starts the reopen backoff over.
    reopens: resume && !resume.stable ? resume.reopens : 0,
    // The first end is not a stall: the first reconnect waits initialDelayMs like any other.
    progressed: resume?.progressed ?? true,
    opened: resume !== undefined,
    unavailableStatus: undefined,
    lastError: resume?.error,
  }),
  initial: 'starting',
  states: {
    starting: {
      always: [{ guard: 'resumes a followed stream', target: 'ended' }, { target: 'connected' }],
    },
    connected: {
      entry: {
        type: 'follow stream',
        params: ({ context }) => ({ server: context.server, lastEventId: context.lastEventId }),
      },
      exit: 'stop following',
      initial: 'opening',
      states: {
        opening: {
          on: {
            STREAM_OPENED: { target: 'streaming', actions: ['forget error', 'remember opened', 'report settled'] },
            STREAM_FAILED: [
              {
                guard: { type: 'server is unreachable', params: ({ event }) => event },
                target: '#listener.unreachable',
                actions: [{ type: 'remember error', params: ({ event }) => event }, 'report settled'],
              },
              {
                target: '#listener.ended',
                actions: [{ type: 'remember error', params: ({ event }) => event }, 'report settled'],
              },
            ],
          },
        },
        streaming: {
          entry: [
            {
              type: 'hand over stream',
              params: ({ context: { lastEventId, retryMs, stalledAttempts, reopens, progressed } }) => ({
                lastEventId,
                retryMs,
                stalledAttempts,
                reopens,
                progressed,
              }),
            },
            'report nothing to listen',
          ],
          // Until it is stopped (a listener not handing over, as in the model tests) it follows
          // the stream itself. Open long enough to be healthy: a later end starts the reopen backoff over.
          after: { 'stream stable delay': { actions: 'forget reopens' } },
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
        STREAM_PROGRESSED: { actions: { type: 'remember progress', params: ({ event }) => event } },
        RETRY: { actions: { type: 'remember retry', params: ({ event }) => event } },
        STREAM_ENDED: { target: 'ended' },
        // A new listen with the new set (the old one is closed as this state is left).
        SUBSCRIPTIONS_CHANGED: { target: 'connected', reenter: true },
      },
    },
    ended: {
      entry: 'count reconnect attempt',
      always: [{ guard: 'may reconnect', target: 'waiting' }, { target: 'gave up' }],
    },
    waiting: {
      after: { 'reconnect delay': 'connected' },
      on: { SUBSCRIPTIONS_CHANGED: 'connected' },
    },
    /** The server offers no listening stream; nothing more to do (modern: until the subscriptions change). */
    unavailable: {
      // The connection stops an idle listener (and starts one again when something is wanted).
      entry: 'report nothing to listen',
      on: { SUBSCRIPTIONS_CHANGED: 'connected' },
    },
    /** The server could not be reached to reopen the stream: the connection reconnects, and a new listener starts. */
    unreachable: {
      entry: 'report unreachable',
    },
    /** The server restarted: the connection re-initializes, and a new listener starts with the new session. */
    'session refused': {
      entry: 'report refused session',
    },
    'gave up': {
      entry: 'report lost',
    },
  },
});

/**
 * One events subscription (SEP-3415, `io.modelcontextprotocol/events`, draft; docs/events.md),
 * a child of its server's connection. Three delivery modes, one machine:
 *
 *   starting -> polling -> (hasMore) polling | waiting -> (nextPollMs, floored) polling       (poll)
 *   starting -> streaming.confirming -> (active) streaming.live -> (2× heartbeat silence) retrying  (push)
 *   starting -> subscribing -> subscribed -> (before refreshBefore, jittered) subscribing           (webhook)
 *   any failure that may pass -> retrying -> (backoff, or the server's Retry-After) -> starting
 *   RESUBSCRIBE (a new session, events/list_changed) -> starting;   CLOSE -> closing -> closed
 *   a termination the server means (NotFound, Forbidden, Unsupported, InvalidParams) -> ended
 *
 * The runtime reports evidence (a poll's answer, a stream's frames, a webhook delivery, a failure
 * already classified as `terminal` or not); the machine decides when to ask again, when a stream
 * is dead and when to give up. Delivery (`deliver events`: the consumer, then the cursor in the
 * store) is a provided action; the cursor the next request carries is this context's.
 */
import { assign, setup, type PromiseActorLogic, type CallbackActorLogic } from 'xstate';
import { restartDelay, type BackoffPolicy } from './restart-policy.js';

export type DeliveryMode = 'poll' | 'push' | 'webhook';

/** One event as the server sent it (`EventOccurrence`). */
export interface EventOccurrence {
  eventId: string;
  name: string;
  timestamp: string;
  data: Record<string, unknown>;
  cursor?: string | null | undefined;
  _meta?: Record<string, unknown> | undefined;
}

export interface SubscriptionPolicy {
  /** The least wait between polls whatever `nextPollMs` says (SEP: default 1000 ms). */
  pollFloorMs: number;
  /** The push stream's heartbeat interval assumed (SEP: at most 30 s); 2× of silence is death. */
  heartbeatMs: number;
  /** After a failure: the restart backoff of the server. */
  backoff: BackoffPolicy;
  /** Webhook: refresh this long before `refreshBefore` at least (plus up to 10 % of the grant, at random). */
  refreshMarginMs: number;
  /** Webhook with no expiry granted: refresh (a health check) this often. */
  noExpiryRefreshMs: number;
}

export const DEFAULT_SUBSCRIPTION_POLICY: SubscriptionPolicy = {
  pollFloorMs: 1_000,
  heartbeatMs: 30_000,
  backoff: { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 },
  refreshMarginMs: 30_000,
  noExpiryRefreshMs: 3_600_000,
};

export interface SubscriptionInput {
  /** Finds the subscription's effects (src/events/subscription-actors.ts). */
  key: string;
  server: string;
  name: string;
  mode: DeliveryMode;
  /** Where to resume: the stored cursor, or null (start from now). */
  cursor: string | null;
  policy: SubscriptionPolicy;
  random?: (() => number) | undefined;
}

/** What a request of the subscription carries: whose it is (its key), and where to resume. */
export interface SubscriptionRequest {
  subscription: string;
  cursor: string | null;
}

/** A failure, as the runtime read it: `terminal` when the server meant it (no retry helps). */
export interface SubscriptionFailure {
  message: string;
  terminal: boolean;
  /** A 429's `Retry-After`, in ms. */
  retryAfterMs?: number | undefined;
}

export interface PollOutput {
  events: EventOccurrence[];
  cursor: string | null;
  truncated: boolean;
  hasMore: boolean;
  nextPollMs: number | undefined;
}

export interface WebhookGrant {
  cursor: string | null;
  truncated: boolean;
  /** Milliseconds until `refreshBefore`; null: no expiry granted. */
  refreshInMs: number | null;
}

/** What a delivery hands the runtime: the events (maybe none) and the position after them. */
export interface Delivery {
  events: EventOccurrence[];
  cursor: string | null;
  truncated: boolean;
}

export type SubscriptionEvent =
  | { type: 'STREAM_ACTIVE'; cursor: string | null; truncated: boolean }
  | { type: 'STREAM_EVENT'; event: EventOccurrence }
  | { type: 'STREAM_HEARTBEAT'; cursor: string | null }
  | { type: 'STREAM_ERROR'; message: string }
  /** The push stream is over: refused, terminated (`notifications/events/terminated`), ended or broken. */
  | { type: 'STREAM_CLOSED'; failure: SubscriptionFailure }
  /** Webhook: a `terminated` envelope. */
  | { type: 'TERMINATED'; failure: SubscriptionFailure }
  | { type: 'WEBHOOK_EVENT'; event: EventOccurrence }
  | { type: 'WEBHOOK_GAP'; cursor: string | null }
  | { type: 'RESUBSCRIBE' }
  | { type: 'CLOSE' };

export interface SubscriptionContext {
  key: string;
  server: string;
  name: string;
  mode: DeliveryMode;
  cursor: string | null;
  policy: SubscriptionPolicy;
  /** Failures in a row (reset by a poll answered, a stream confirmed, a webhook granted). */
  attempt: number;
  retryAfterMs: number | undefined;
  nextPollMs: number | undefined;
  refreshInMs: number | null;
  lastError: string | undefined;
  random?: (() => number) | undefined;
}

const failureOf = (error: unknown): SubscriptionFailure =>
  typeof error === 'object' && error !== null && 'terminal' in error
    ? (error as SubscriptionFailure)
    : { message: error instanceof Error ? error.message : String(error), terminal: false };

export const subscriptionMachine = setup({
  types: {
    input: {} as SubscriptionInput,
    context: {} as SubscriptionContext,
    events: {} as SubscriptionEvent,
  },
  actors: {
    /** `events/poll` with the cursor. */
    poll: {} as PromiseActorLogic<PollOutput, SubscriptionRequest>,
    /** `events/stream` with the cursor: its frames come back as STREAM_* events, its end as STREAM_CLOSED. */
    stream: {} as CallbackActorLogic<SubscriptionEvent, SubscriptionRequest>,
    /** `events/subscribe` with the webhook URL, the secret and the cursor. */
    'subscribe webhook': {} as PromiseActorLogic<WebhookGrant, SubscriptionRequest>,
    /** Webhook: `events/unsubscribe`; the other modes have nothing to undo on the server. */
    unsubscribe: {} as PromiseActorLogic<void, SubscriptionRequest>,
  },
  actions: {
    // Provided by src/events: the consumer gets the events it has not seen, then the cursor and the
    // subscription are written to the store.
    'deliver events': (_, _delivery: Delivery) => {},
    /** Provided: the subscription ended (terminated, or closed); consumers are told. */
    'tell ended': (_, _params: { error: string | undefined }) => {},
    'remember cursor': assign((_, params: { cursor: string | null }) => ({ cursor: params.cursor })),
    'remember poll': assign((_, output: PollOutput) => ({
      cursor: output.cursor,
      nextPollMs: output.nextPollMs,
      attempt: 0,
      retryAfterMs: undefined,
      lastError: undefined,
    })),
    'remember grant': assign(({ context }, grant: WebhookGrant) => ({
      cursor: grant.cursor,
      refreshInMs: grant.refreshInMs,
      attempt: 0,
      retryAfterMs: undefined,
      lastError: undefined,
      random: context.random,
    })),
    'reset attempts': assign({ attempt: 0, retryAfterMs: undefined, lastError: undefined }),
    'count failure': assign(({ context }, failure: SubscriptionFailure) => ({
      attempt: context.attempt + 1,
      retryAfterMs: failure.retryAfterMs,
      lastError: failure.message,
    })),
    'note error': assign((_, params: { message: string }) => ({ lastError: params.message })),
  },
  guards: {
    'is poll': ({ context }) => context.mode === 'poll',
    'is push': ({ context }) => context.mode === 'push',
    'has more': (_, output: PollOutput) => output.hasMore,
    'is terminal': (_, failure: SubscriptionFailure) => failure.terminal,
  },
  delays: {
    'poll interval': ({ context }) => Math.max(context.policy.pollFloorMs, context.nextPollMs ?? 0),
    'silence limit': ({ context }) => 2 * context.policy.heartbeatMs,
    // Attempt 1 waits initialMs; a 429's Retry-After is obeyed when longer.
    'retry delay': ({ context }) =>
      Math.max(
        context.retryAfterMs ?? 0,
        restartDelay(context.attempt - 1, context.policy.backoff, context.random ?? Math.random),
      ),
    'refresh delay': ({ context }) => {
      const grant = context.refreshInMs;
      if (grant === null) return context.policy.noExpiryRefreshMs;
      const jitter = (context.random ?? Math.random)() * 0.1 * grant;
      return Math.max(0, Math.round(grant - Math.max(context.policy.refreshMarginMs, 0) - jitter));
    },
  },
}).createMachine({
  id: 'subscription',
  context: ({ input }) => ({
    key: input.key,
    server: input.server,
    name: input.name,
    mode: input.mode,
    cursor: input.cursor,
    policy: input.policy,
    attempt: 0,
    retryAfterMs: undefined,
    nextPollMs: undefined,
    refreshInMs: null,
    lastError: undefined,
    ...(input.random && { random: input.random }),
  }),
  initial: 'starting',
  on: {
    CLOSE: '.closing',
  },
  states: {
    starting: {
      always: [
        { guard: 'is poll', target: 'polling' },
        { guard: 'is push', target: 'streaming' },
        { target: 'subscribing' },
      ],
    },
    polling: {
      invoke: {
        id: 'poll',
        src: 'poll',
        input: ({ context }) => ({ subscription: context.key, cursor: context.cursor }),
        onDone: [
          {
            // A backlog: drain at once, whatever nextPollMs says.
            guard: { type: 'has more', params: ({ event }) => event.output },
            target: 'polling',
            reenter: true,
            actions: [
              { type: 'deliver events', params: ({ event }) => event.output },
              { type: 'remember poll', params: ({ event }) => event.output },
            ],
          },
          {
            target: 'waiting',
            actions: [
              { type: 'deliver events', params: ({ event }) => event.output },
              { type: 'remember poll', params: ({ event }) => event.output },
            ],
          },
        ],
        onError: [
          { guard: { type: 'is terminal', params: ({ event }) => failureOf(event.error) }, target: 'ended' },
          { target: 'retrying', actions: { type: 'count failure', params: ({ event }) => failureOf(event.error) } },
        ],
      },
      on: { RESUBSCRIBE: {} },
    },
    waiting: {
      after: { 'poll interval': 'polling' },
      on: { RESUBSCRIBE: 'polling' },
    },
    streaming: {
      invoke: {
        id: 'stream',
        src: 'stream',
        input: ({ context }) => ({ subscription: context.key, cursor: context.cursor }),
      },
      initial: 'confirming',
      on: {
        // Each frame proves the stream alive: `live` is entered again (the source's descendants are left), its watchdog restarts.
        STREAM_ACTIVE: {
          target: '.live',
          actions: [
            'reset attempts',
            {
              type: 'deliver events',
              params: ({ event }) => ({ events: [], cursor: event.cursor, truncated: event.truncated }),
            },
            { type: 'remember cursor', params: ({ event }) => event },
          ],
        },
        STREAM_EVENT: {
          target: '.live',
          actions: [
            {
              type: 'deliver events',
              params: ({ event, context }) => ({
                events: [event.event],
                cursor: event.event.cursor === undefined ? context.cursor : event.event.cursor,
                truncated: false,
              }),
            },
            {
              type: 'remember cursor',
              params: ({ event, context }) => ({
                cursor: event.event.cursor === undefined ? context.cursor : event.event.cursor,
              }),
            },
          ],
        },
        STREAM_HEARTBEAT: {
          target: '.live',
          actions: [
            { type: 'deliver events', params: ({ event }) => ({ events: [], cursor: event.cursor, truncated: false }) },
            { type: 'remember cursor', params: ({ event }) => event },
          ],
        },
        // A transient failure upstream: the stream stays.
        STREAM_ERROR: { actions: { type: 'note error', params: ({ event }) => event } },
        // Terminated by the server, refused, ended by its final frame, or broken: open again with the cursor, unless it was meant.
        STREAM_CLOSED: [
          { guard: { type: 'is terminal', params: ({ event }) => event.failure }, target: 'ended' },
          { target: 'retrying', actions: { type: 'count failure', params: ({ event }) => event.failure } },
        ],
        RESUBSCRIBE: 'starting',
      },
      states: {
        // Opened, not yet confirmed (`notifications/events/active`).
        confirming: {
          after: {
            'silence limit': {
              target: '#subscription.retrying',
              actions: { type: 'count failure', params: () => failureOf('the stream was never confirmed') },
            },
          },
        },
        live: {
          after: {
            'silence limit': {
              target: '#subscription.retrying',
              actions: {
                type: 'count failure',
                params: () => failureOf('the stream went silent for twice its heartbeat'),
              },
            },
          },
        },
      },
    },
    subscribing: {
      invoke: {
        id: 'subscribe',
        src: 'subscribe webhook',
        input: ({ context }) => ({ subscription: context.key, cursor: context.cursor }),
        onDone: {
          target: 'subscribed',
          actions: [
            {
              type: 'deliver events',
              params: ({ event }) => ({ events: [], cursor: event.output.cursor, truncated: event.output.truncated }),
            },
            { type: 'remember grant', params: ({ event }) => event.output },
          ],
        },
        onError: [
          { guard: { type: 'is terminal', params: ({ event }) => failureOf(event.error) }, target: 'ended' },
          { target: 'retrying', actions: { type: 'count failure', params: ({ event }) => failureOf(event.error) } },
        ],
      },
      on: { RESUBSCRIBE: {} },
    },
    subscribed: {
      after: { 'refresh delay': 'subscribing' },
      on: {
        WEBHOOK_EVENT: {
          actions: [
            {
              type: 'deliver events',
              params: ({ event, context }) => ({
                events: [event.event],
                cursor: event.event.cursor === undefined ? context.cursor : event.event.cursor,
                truncated: false,
              }),
            },
            {
              type: 'remember cursor',
              params: ({ event, context }) => ({
                cursor: event.event.cursor === undefined ? context.cursor : event.event.cursor,
              }),
            },
          ],
        },
        WEBHOOK_GAP: {
          actions: [
            { type: 'deliver events', params: ({ event }) => ({ events: [], cursor: event.cursor, truncated: true }) },
            { type: 'remember cursor', params: ({ event }) => event },
          ],
        },
        TERMINATED: [
          { guard: { type: 'is terminal', params: ({ event }) => event.failure }, target: 'ended' },
          { target: 'subscribing' },
        ],
        RESUBSCRIBE: 'subscribing',
      },
    },
    retrying: {
      after: { 'retry delay': 'starting' },
      on: { RESUBSCRIBE: 'starting' },
    },
    closing: {
      invoke: {
        id: 'unsubscribe',
        src: 'unsubscribe',
        input: ({ context }) => ({ subscription: context.key, cursor: context.cursor }),
        onDone: 'closed',
        onError: 'closed',
      },
      on: { CLOSE: {} },
    },
    closed: {
      type: 'final',
      entry: { type: 'tell ended', params: () => ({ error: undefined }) },
    },
    ended: {
      type: 'final',
      entry: {
        type: 'tell ended',
        params: ({ context, event }) => ({ error: endedError(event) ?? context.lastError }),
      },
    },
  },
});

/** The message of the failure that ended a subscription, from the event that ended it. */
function endedError(event: { type: string; error?: unknown; failure?: SubscriptionFailure }): string | undefined {
  if (event.failure) return event.failure.message;
  if ('error' in event && event.error !== undefined) return failureOf(event.error).message;
  return undefined;
}

/**
 * One MCP server's connection lifecycle, and every decision about it:
 *
 *   connecting -> discovering -> ready                        (modern: 2026-07-28, no session)
 *                     \-> initializing                         (the probe found a legacy server)
 *   connecting -> initializing -> ready -> expired -> reinitializing -> ready   (legacy: 2025 era)
 *                                          expired -> discovering (modern: the server changed its versions)
 *                                  |  \-> probing -> ready | expired | reconnecting | authorizing
 *                                  \-> authorizing -> ready | connecting
 *   (any failure) -> reconnecting -> (supervisor: RESTART) -> connecting
 *                                \-> (supervisor: GIVE_UP) -> failed -> (revival) -> connecting
 *   any -> closing -> closed;   RECONNECT: any -> connecting
 *
 * The runtime reports evidence (SESSION_EXPIRED, SESSION_IN_DOUBT, SERVER_UNREACHABLE,
 * CONNECTION_LOST, AUTHORIZATION_REQUIRED); the machine decides; the runtime executes the
 * provided actions: `hold requests` / `release requests` (the request gate), `reject waiting
 * requests`, `fail parked requests`, `settle doubtful requests`, `schedule revival`. Requests
 * never pass through the machine: while `ready.serving` they go straight to the transport.
 *
 * The era is chosen by the spec's negotiation rules (docs/protocol-eras.md): a `server/discover`
 * probe unless the era is pinned or latched legacy; the era that worked is latched like the transport.
 *
 * Children: `sse-fallback` (in `connecting`, for `type: 'auto'` servers that refuse the
 * Streamable HTTP initialize with 400/404/405), `listener` and `keepalive` (in `ready`), and one
 * `probe` of the session (in `probing`).
 */
import { connectionSetup } from './connection.setup.js';
import { failureOf, type Failure, type ProbeVerdict } from './connection.types.js';
import { DEFAULT_REVIVE, reviveDelay } from './restart-policy.js';

export * from './connection.types.js';

// Repeated transition parts, typed by what they read from the event.
/** `remember error` with an invoked actor's error. */
const rememberActorError = {
  type: 'remember error',
  params: ({ event }: { event: { error: unknown } }) => failureOf(event.error),
} as const;
/** `remember error` with an event's error text (never fatal). */
const rememberEventError = {
  type: 'remember error',
  params: ({ event }: { event: { error: string } }) => ({ error: event.error, fatal: false }),
} as const;
/** `remember error` with a lost connection (fatal when the event says so). */
const rememberLostConnection = {
  type: 'remember error',
  params: ({ event }: { event: { error: string; fatal?: boolean } }) => ({
    error: event.error,
    fatal: event.fatal === true,
  }),
} as const;
const needsAuthorizationGuard = {
  type: 'needs authorization',
  params: ({ event }: { event: { error: unknown } }) => ({ error: event.error }),
} as const;
/** Leaving `probing` any way but "alive": the doubtful requests are parked for replay. */
const parkDoubtfulRequests = { type: 'settle doubtful requests', params: { lost: true } } as const;
/** `handle.reconnect()`: a new transport and a new session. */
const reconnectActions = ['forget session', 'forget revivals', 'replace transport'] as const;

export const connectionMachine = connectionSetup.createMachine({
  id: 'connection',
  context: ({ input }) => ({
    server: input.server,
    configuredTransport: input.transport,
    transport: undefined,
    latchedTransport: undefined,
    preferredEra: input.era ?? 'auto',
    latchedEra: undefined,
    keepalive: input.keepalive,
    session: undefined,
    listenerOpenTimeoutMs: input.listenerOpenTimeoutMs,
    provenAfterMs: input.provenAfterMs,
    revive: input.revive ?? DEFAULT_REVIVE,
    revivals: 0,
    lastError: undefined,
    fatal: false,
  }),
  initial: 'connecting',
  on: {
    CLOSE: '.closing',
    RECONNECT: { target: '.connecting', actions: reconnectActions },
  },
  states: {
    connecting: {
      entry: 'hold requests',
      initial: 'opening transport',
      states: {
        'opening transport': {
          invoke: {
            id: 'transport',
            src: 'connect transport',
            input: ({ context }) => ({
              server: context.server,
              transport: context.latchedTransport ?? context.configuredTransport,
            }),
            onDone: [
              {
                guard: { type: 'speaks legacy', params: ({ event }) => event.output },
                target: '#connection.initializing',
                actions: { type: 'remember transport', params: ({ event }) => event.output },
              },
              {
                target: '#connection.discovering',
                actions: { type: 'remember transport', params: ({ event }) => event.output },
              },
            ],
            onError: [
              // A legacy SSE stream can be refused with 401 when it opens.
              {
                guard: needsAuthorizationGuard,
                target: '#connection.authorizing',
                actions: rememberActorError,
              },
              {
                target: '#connection.reconnecting',
                actions: rememberActorError,
              },
            ],
          },
        },
        // Streamable HTTP was refused: try the legacy HTTP+SSE transport once, and latch it if it answers.
        'falling back': {
          invoke: {
            id: 'sse-fallback',
            src: 'sse-fallback',
            input: ({ context }) => ({ server: context.server, reason: context.lastError ?? 'refused' }),
            onDone: [
              {
                guard: { type: 'found legacy endpoint', params: ({ event }) => event.output },
                target: 'opening transport',
                actions: 'latch legacy SSE',
              },
              {
                target: '#connection.reconnecting',
                actions: {
                  type: 'remember error',
                  params: ({ event }) => ({ error: event.output.found ? undefined : event.output.error, fatal: false }),
                },
              },
            ],
          },
        },
      },
    },
    // One `server/discover`: a modern server is ready at once; anything else is a legacy server.
    discovering: {
      invoke: {
        id: 'discover',
        src: 'discover server',
        input: ({ context }) => ({ server: context.server }),
        onDone: [
          {
            guard: { type: 'found modern server', params: ({ event }) => event.output },
            target: 'ready',
            actions: { type: 'remember discovery', params: ({ event }) => event.output },
          },
          { target: 'initializing' },
        ],
        onError: [
          {
            guard: needsAuthorizationGuard,
            target: 'authorizing',
            actions: rememberActorError,
          },
          {
            target: 'reconnecting',
            actions: [rememberActorError, 'forget era'],
          },
        ],
      },
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: [rememberLostConnection, 'forget era'] } },
    },
    initializing: {
      invoke: {
        id: 'handshake',
        src: 'initialize session',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: 'ready', actions: { type: 'remember session', params: ({ event }) => event.output } },
        onError: [
          {
            guard: needsAuthorizationGuard,
            target: 'authorizing',
            actions: rememberActorError,
          },
          {
            guard: { type: 'should fall back to legacy SSE', params: ({ event }) => ({ error: event.error }) },
            target: 'connecting.falling back',
            actions: rememberActorError,
          },
          {
            target: 'reconnecting',
            actions: [rememberActorError, 'forget era'],
          },
        ],
      },
      // The transport can die mid-handshake (a legacy SSE stream, a stdio child).
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: rememberLostConnection } },
    },
    ready: {
      invoke: [
        { id: 'listener', src: 'listener', input: ({ context }) => ({ server: context.server }) },
        {
          id: 'keepalive',
          src: 'keepalive',
          input: ({ context }) => ({ server: context.server, settings: context.keepalive }),
        },
      ],
      initial: 'opening listener',
      states: {
        // Server-to-client requests are dropped by servers with no open stream, so requests
        // wait (bounded) until the listener opened or turned out to be unavailable.
        'opening listener': {
          on: { LISTENER_SETTLED: 'serving' },
          after: { 'listener open timeout': 'serving' },
        },
        serving: {
          entry: ['release requests', 'settle attempt'],
          exit: 'hold requests',
        },
      },
      after: { 'session proven delay': { actions: ['report session proven', 'forget revivals'] } },
      on: {
        SESSION_EXPIRED: {
          guard: { type: 'is current session', params: ({ event }) => event },
          target: 'expired',
        },
        LISTENER_REFUSED_SESSION: 'expired',
        SESSION_IN_DOUBT: {
          guard: { type: 'is current session', params: ({ event }) => event },
          target: 'probing',
        },
        SERVER_UNREACHABLE: {
          target: 'reconnecting',
          actions: rememberEventError,
        },
        AUTHORIZATION_REQUIRED: {
          target: 'authorizing',
          actions: rememberEventError,
        },
        CONNECTION_LOST: { target: 'reconnecting', actions: rememberLostConnection },
        LISTENER_LOST: {
          target: 'reconnecting',
          actions: rememberEventError,
        },
      },
    },
    // One probe on the session decides what an ambiguous sign meant; requests wait meanwhile.
    probing: {
      invoke: {
        id: 'probe',
        src: 'probe session',
        input: ({ context }) => ({ server: context.server }),
        onDone: [
          {
            guard: { type: 'session is alive', params: ({ event }) => event.output },
            target: 'ready',
            actions: { type: 'settle doubtful requests', params: { lost: false } },
          },
          {
            guard: { type: 'session is lost', params: ({ event }) => event.output },
            target: 'expired',
            actions: parkDoubtfulRequests,
          },
          {
            guard: { type: 'probe was refused', params: ({ event }) => event.output },
            target: 'authorizing',
            actions: [
              parkDoubtfulRequests,
              { type: 'remember error', params: ({ event }) => probeFailure(event.output) },
            ],
          },
          {
            target: 'reconnecting',
            actions: [
              parkDoubtfulRequests,
              { type: 'remember error', params: ({ event }) => probeFailure(event.output) },
            ],
          },
        ],
        onError: {
          target: 'reconnecting',
          actions: [parkDoubtfulRequests, rememberActorError],
        },
      },
      on: {
        SESSION_EXPIRED: {
          guard: { type: 'is current session', params: ({ event }) => event },
          target: 'expired',
          actions: parkDoubtfulRequests,
        },
        SERVER_UNREACHABLE: {
          target: 'reconnecting',
          actions: [parkDoubtfulRequests, rememberEventError],
        },
        CONNECTION_LOST: {
          target: 'reconnecting',
          actions: [parkDoubtfulRequests, rememberLostConnection],
        },
        // Not left to the root's RECONNECT: the doubtful requests would wait on, settled by no verdict.
        RECONNECT: { target: 'connecting', actions: [parkDoubtfulRequests, ...reconnectActions] },
      },
    },
    expired: {
      // The session is gone: forget it, then one coalesced handshake (modern: one discovery). Parked requests wait for it.
      entry: 'forget session',
      always: [{ guard: 'era is modern', target: 'discovering' }, { target: 'reinitializing' }],
    },
    reinitializing: {
      invoke: {
        id: 'handshake',
        src: 'initialize session',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: 'ready', actions: { type: 'remember session', params: ({ event }) => event.output } },
        onError: [
          {
            guard: needsAuthorizationGuard,
            target: 'authorizing',
            actions: rememberActorError,
          },
          // No loop: a handshake that fails goes through the restart policy.
          {
            target: 'reconnecting',
            actions: rememberActorError,
          },
        ],
      },
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: rememberLostConnection } },
    },
    authorizing: {
      // One authorization for every refused request; requests are held meanwhile.
      invoke: {
        id: 'authorize',
        src: 'authorize',
        input: ({ context }) => ({ server: context.server }),
        onDone: [{ guard: 'has session', target: 'ready' }, { target: 'connecting' }],
        onError: {
          target: 'reconnecting',
          actions: [rememberActorError, 'fail parked requests'],
        },
      },
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: rememberLostConnection } },
    },
    reconnecting: {
      // Requests keep waiting (each within its own timeout) for the connection to come back.
      entry: ['forget session', 'report connection down', 'settle attempt'],
      on: {
        RESTART: 'connecting',
        GIVE_UP: {
          target: 'failed',
          actions: { type: 'remember give-up reason', params: ({ event }) => event },
        },
      },
    },
    /** The restart budget is spent, or the failure is one a restart cannot fix. */
    failed: {
      initial: 'deciding',
      states: {
        deciding: {
          always: [{ guard: 'may revive', target: 'waiting to revive' }, { target: 'for good' }],
        },
        // A long-running agent has nobody to restart it: try again, with a capped backoff.
        'waiting to revive': {
          entry: {
            type: 'schedule revival',
            params: ({ context }) => ({
              delayMs: context.revive === false ? 0 : reviveDelay(context.revivals, context.revive),
            }),
          },
          after: { 'revive delay': { target: '#connection.connecting', actions: 'count revival' } },
        },
        'for good': {
          entry: {
            type: 'reject waiting requests',
            params: ({ context }) => ({ reason: `the server has failed: ${context.lastError ?? 'unknown error'}` }),
          },
        },
      },
    },
    closing: {
      entry: { type: 'reject waiting requests', params: { reason: 'the connection was closed' } },
      invoke: {
        id: 'close',
        src: 'close session',
        input: ({ context }) => ({ server: context.server }),
        onDone: 'closed',
        onError: 'closed',
      },
      on: { CLOSE: {}, RECONNECT: {} },
    },
    closed: {
      type: 'final',
      entry: 'settle attempt',
    },
  },
});

/** A probe that did not find the session alive, as a failure. */
function probeFailure(probe: ProbeVerdict): Failure {
  if (probe.verdict === 'unreachable' || probe.verdict === 'unauthorized') return { error: probe.error, fatal: false };
  if (probe.verdict === 'session lost') return { error: probe.evidence, fatal: false };
  return { error: undefined, fatal: false };
}

/**
 * One MCP server's connection lifecycle, and every decision about it:
 *
 *   connecting -> discovering -> ready                        (modern: 2026-07-28, no session)
 *                     \-> initializing                         (the probe found a legacy server)
 *   connecting -> initializing -> ready -> expired -> reinitializing -> ready   (legacy: 2025 era)
 *                                          expired -> discovering (modern: the server changed its versions)
 *                                  |  \-> probing -> ready | expired | reconnecting | authorizing
 *                                  \-> authorizing -> ready | connecting
 *   (any failure) -> reconnecting -> (RESTART after the backoff, or capped while requests wait) -> (origin's turn) -> connecting
 *                                \-> (GIVE_UP: the budget is spent) -> failed -> (revival) -> (origin's turn) -> connecting
 *
 * The restart policy (restart-policy.ts) is the connection's own when its input has `restart`
 * (each server's root actor): `reconnecting` answers itself with RESTART after the backoff or
 * GIVE_UP, counts restarts in a sliding window, and the budget resets once a session proved
 * healthy. Without `restart` a parent answers the CONNECTION_DOWN report (`supervisorMachine`).
 *   any -> closing -> closed;   RECONNECT: any -> connecting
 *
 * The runtime reports evidence (SESSION_EXPIRED, SESSION_IN_DOUBT, SERVER_UNREACHABLE,
 * CONNECTION_LOST, AUTHORIZATION_REQUIRED); the machine decides; the runtime executes the
 * provided actions: `hold requests` / `release requests` (the request gate), `reject waiting
 * requests`, `fail parked requests`, `settle doubtful requests`. Requests never pass through the
 * machine: while `ready.serving` they go straight to the transport.
 *
 * The era is chosen by the spec's negotiation rules (docs/protocol-eras.md): a `server/discover`
 * probe unless the era is pinned or latched legacy; the era that worked is latched like the transport.
 *
 * It says what happened (connection.facts.ts): each move names its cause and ends with a
 * `state changed` fact, after the lifecycle facts of that move (session started or ended, the
 * fallback, the restart, giving up …); `revival scheduled` follows the move into `failed`.
 *
 * The states live beside their concept: connection.opening.ts (connecting, discovering,
 * initializing), connection.session.ts (ready, probing, expired, reinitializing, authorizing),
 * connection.recovery.ts (reconnecting, failed); closing and closed are here.
 *
 * Children: `subscription.<n>` (events subscriptions, any state: connection.events.ts), `sse-fallback` (in `connecting`, for `type: 'auto'` servers that refuse the
 * Streamable HTTP initialize with 400/404/405), `listener` and `keepalive` (in `ready`), and one
 * `probe` of the session (in `probing`).
 */
import type { SnapshotFrom } from 'xstate';
import { announce, because, becauseActorFailed, tell } from './connection.facts.js';
import { connecting, discovering, initializing } from './connection.opening.js';
import { failed, reconnecting } from './connection.recovery.js';
import { authorizing, expired, probing, ready, reconnectActions, reinitializing } from './connection.session.js';
import { connectionSetup } from './connection.setup.js';
import { subscriptionHandlers } from './connection.events.js';
import { DEFAULT_REVIVE, DEFAULT_WAITING_RECONNECT_MS, NEW_RESTART_RECORD } from './restart-policy.js';

export * from './connection.types.js';
export * from './connection.facts.js';

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
    listening: false,
    provenAfterMs: input.provenAfterMs,
    revive: input.revive ?? DEFAULT_REVIVE,
    waitingReconnectMs: input.waitingReconnectMs ?? DEFAULT_WAITING_RECONNECT_MS,
    lastError: undefined,
    fatal: false,
    cause: { cause: 'start', error: undefined },
    restart: input.restart,
    restarts: NEW_RESTART_RECORD,
    // Only when given (tests; a mass start): a context of 20 keys is a dictionary after each
    // assign (~0.7 KB; V8 of Node 20, 22 and 24 alike), test/unit/connection-context-shape.test.ts.
    ...(input.random && { random: input.random }),
    ...(input.listenTurn && { listenTurn: input.listenTurn }),
  }),
  initial: 'connecting',
  on: {
    CLOSE: { target: '.closing', actions: [tell({ type: 'close requested' }), because('close requested')] },
    RECONNECT: { target: '.connecting', actions: reconnectActions },
    RESTART_WINDOW_PASSED: {
      guard: { type: 'is current window', params: ({ event }) => event },
      actions: 'forget one restart',
    },
    ...subscriptionHandlers,
  },
  states: {
    connecting,
    discovering,
    initializing,
    ready,
    probing,
    expired,
    reinitializing,
    authorizing,
    reconnecting,
    failed,
    closing: {
      entry: [
        { type: 'tell session ended', params: { reason: 'closed' } },
        { type: 'reject waiting requests', params: { reason: 'the connection was closed' } },
        announce('closing'),
      ],
      invoke: {
        id: 'close',
        src: 'close session',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: 'closed', actions: because('closed') },
        onError: { target: 'closed', actions: becauseActorFailed('close failed') },
      },
      on: { CLOSE: {}, RECONNECT: {} },
    },
    closed: {
      type: 'final',
      entry: ['settle attempt', tell({ type: 'closed' }), announce('closed')],
    },
  },
});

/** The top-level state of a state value: `{ ready: 'serving' }` → `'ready'`. */
type TopLevel<V> = V extends string ? V : keyof V & string;

/** Where a connection is: the machine's top-level states (the public `ConnectionState`). */
export type ConnectionState = TopLevel<SnapshotFrom<typeof connectionMachine>['value']>;

/** Every top-level state, read from the machine (the state gauge has one series per state). */
export const CONNECTION_STATES = Object.keys(connectionMachine.root.states) as ConnectionState[];

/**
 * Down for good: the connection serves nothing more until it is started again. `closing` and
 * `closed` always; `failed` too, unless the caller waits for what may bring it back (`revives`:
 * its revival, or a `RECONNECT`). A name that is no state of the machine (a status's `stopped`)
 * is not ended. Every "is it over?" outside the machine asks this.
 */
export function isEnded(state: ConnectionState | (string & {}), revives = false): boolean {
  return state === 'closing' || state === 'closed' || (state === 'failed' && !revives);
}

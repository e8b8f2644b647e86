/**
 * What the machines ask of the server they run for: the one contract between the lifecycle
 * (connection machine and its keepalive, listener and sse-fallback children, the supervisor's
 * crash handling) and the runtime that does the I/O. The runtime (src/runtime/server-runtime.ts)
 * implements it; the actors and actions (src/runtime/actors/) call nothing else. Each member
 * says which state calls it, and when; the last two are how the machine's facts reach it.
 */
import type { ActorOptions, AnyActorLogic } from 'xstate';
import type {
  ConfiguredTransport,
  DiscoverVerdict,
  ProbeVerdict,
  SessionInfo,
  TransportOpened,
} from './connection.types.js';
import type { FactOf } from './connection.facts.js';
import type { KeepaliveSettings, LivenessEvidence, ProbeOutput } from './keepalive.machine.js';

/** XState's clock (`createActor(logic, { clock })`): the origin's keepalive runs on its members' clock. */
export type ActorClock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

/** `ready` with `proof: 'origin'` over HTTP: the server's part in its origin's one keepalive (src/runtime/keepalive/). */
export interface OriginKeepaliveShare {
  /** Entering `ready`: joins (the first member starts it); `clock` is the connection actor's. */
  join(settings: KeepaliveSettings, clock: ActorClock | undefined): void;
  /** Leaving `ready` (or closing): leaves (the last member out stops it). */
  leave(): void;
}

/** One read of a listening stream: what the listener machine hears from it while it is open. */
export interface ListenerCursorHooks {
  onEventId(id: string): void;
  onRetry(ms: number): void;
  /** Modern era: something arrived on the listen (its acknowledgment, a notification). */
  onProgress(): void;
}

/** What opening the listening stream gave: an open stream to read, or none (and why). */
export type ListenerOpening =
  | { kind: 'open'; read: (hooks: ListenerCursorHooks) => Promise<void>; cancel: () => void }
  /** No listening stream: the status of a refused GET, or (modern) why there is nothing to listen to. */
  | { kind: 'unavailable'; status?: number | undefined; reason?: string | undefined };

/** `reconnecting` and `failed`: this server's turns at its origin (connections to one origin reconnect one at a time). */
export interface OriginTurn {
  /** `waiting for origin` / `reviving`: resolves when this server may try to connect (at once while its origin is up). */
  turn(): Promise<void>;
  /** Entering a backoff: REQUESTS_WAITING is sent now if requests wait for the server. */
  ask(): void;
  /** keepalive child, bound when it starts: when the origin last answered (`waiting` skips a probe on it). */
  readonly liveness: LivenessEvidence;
}

export interface ConnectionHost {
  readonly origin: OriginTurn;
  /** `ready`, proved by its origin: its part in the origin's keepalive; undefined without a shared origin (stdio). */
  readonly originKeepalive: OriginKeepaliveShare | undefined;

  // ---- actors: effects a state waits for (a rejection is the state's error)

  /** `connecting`: opens the transport (or reuses an open one of the same kind); resolves with its kind. */
  connectTransport(kind: ConfiguredTransport): Promise<TransportOpened>;
  /** `discovering` (era `auto` or `modern`): `server/discover`; a modern server's answer stands for the session. */
  discoverServer(): Promise<DiscoverVerdict>;
  /** `initializing` and `reinitializing`: the `initialize` handshake; the session state is restored before it resolves. */
  initialize(): Promise<SessionInfo>;
  /** `probing`: one request on the session, past the gate; its answer (or failure) is the verdict. */
  probeSession(): Promise<ProbeVerdict>;
  /** `authorizing`: the auth provider's flow for the refusal that sent the connection here. */
  authorize(signal: AbortSignal): Promise<void>;
  /** `closing`: ends the session (DELETE), fails what waits and releases the transport. */
  closeSession(): Promise<void>;
  /** keepalive child, `probing` (every interval while `ready`): one probe, skipped while requests are in flight. */
  probe(timeoutMs: number): Promise<ProbeOutput>;
  /** listener child, `opening` (while `ready`): the GET stream, or the modern `subscriptions/listen`. */
  openListener(lastEventId: string | undefined): Promise<ListenerOpening>;
  /** sse-fallback child (a Streamable HTTP refusal while `connecting`): replaces the transport with a legacy SSE one. */
  openLegacyTransport(): Promise<void>;

  // ---- actions: effects run on a transition, synchronously

  /** Entering `connecting`, and leaving `ready.serving`: new requests wait in the gate. */
  holdRequests(): void;
  /** Entering `ready.serving`: parked requests, then held ones, go out (each with a new id). */
  releaseRequests(): void;
  /** Entering `failed.for good` or `closing`: everything waiting fails with this reason, and later requests too. */
  rejectWaitingRequests(reason: string): void;
  /** `authorizing` failed (its actor's error): the requests refused for want of credentials fail with its error. */
  failParkedRequests(): void;
  /** Leaving `probing`: the requests in doubt fail with their error (alive), or are parked for the next session (`lost`). */
  settleDoubtfulRequests(lost: boolean): void;
  /** Entering `ready.serving`, `reconnecting` or `closed`: an attempt is over and `connect()` resolves. */
  settleAttempt(): void;
  /** On `RECONNECT` (`handle.reconnect()`), from any state: the next `connecting` opens a new transport. */
  replaceTransport(): void;
  /** supervisor, `fail crashed server`: the connection actor threw; the server is failed and nothing waits. */
  onCrash(error: unknown): void;

  // ---- facts: what the machine says happened (connection.facts.ts), heard through one
  // subscription per actor (src/runtime/lifecycle-facts.ts), after the snapshot is updated

  /** `state changed`, on entering any top-level state: the transition event, with the cause the machine gave. */
  onTransition(change: FactOf<'state changed'>): void;
  /** `revival scheduled`, on entering `failed.waiting to revive`: when the next attempt runs, for status(). */
  scheduleRevival(delayMs: number): void;
}

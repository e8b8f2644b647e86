/**
 * What the connection machine works with: its input and context, the evidence the runtime sends
 * it (events), what it reports to its supervisor, and the outputs of its actors.
 */
import type { SubscriptionInput } from './subscription.machine.js';
import type { KeepaliveReport, KeepaliveSettings } from './keepalive.machine.js';
import type { ListenerReport, ListenerResume } from './listener.machine.js';
import type { RestartPolicy, RestartRecord, ReviveSettings } from './restart-policy.js';
import { describeError } from './describe-error.js';

export type TransportKind = 'http' | 'sse' | 'stdio';
export type ConfiguredTransport = 'auto' | TransportKind;
/** Legacy: an `initialize` handshake opens a session (2025-11-25 and earlier). Modern: per-request `_meta` (2026-07-28). */
export type Era = 'legacy' | 'modern';
/** `auto`: probe with `server/discover` and fall back to `initialize` (spec 2026-07-28, versioning). */
export type EraPreference = 'auto' | Era;

/** Why the machine last changed its top-level state: reported by the next `state changed`. */
export interface Cause {
  cause: string;
  error: string | undefined;
}

export interface ConnectionInput {
  server: string;
  transport: ConfiguredTransport;
  /** Bound on waiting for the listener before requests are released. */
  listenerOpenTimeoutMs: number;
  /** How long `ready` must last before the supervisor may reset the restart budget. */
  provenAfterMs: number;
  keepalive: KeepaliveSettings | false;
  /** After the restart budget is spent: try again with a capped backoff, or stay failed (`false`). */
  revive?: ReviveSettings | false | undefined;
  /** Which era to speak (default `auto`). */
  era?: EraPreference | undefined;
  /** While requests wait, the reconnect (and revival) backoff is capped at this (default 1000 ms). */
  waitingReconnectMs?: number | undefined;
  /**
   * The connection decides its own restarts under this policy (a server's root actor): a backoff,
   * then RESTART, or GIVE_UP once the budget is spent. Without it a parent decides (it answers
   * CONNECTION_DOWN with RESTART or GIVE_UP, as `supervisorMachine` does).
   */
  restart?: RestartPolicy | undefined;
  /** Jitter source of the restart backoff; tests pass a fixed one. */
  random?: (() => number) | undefined;
  /** A mass start's turn for listening streams (see ListenTurn); none: a stream opens as `ready` is entered. */
  listenTurn?: ListenTurn | undefined;
}

/**
 * A supervisor's mass start: while it still has handshakes to make, a server entering `ready` serves
 * at once and leaves its listening stream for later (`wait`); the start then sends LISTEN_WANTED.
 * Shared by the servers of one start, like `random`.
 */
export interface ListenTurn {
  /** True while listening streams wait for the handshakes. */
  holds(): boolean;
  /** This server's listening stream waits for the turn. */
  wait(server: string): void;
}

/** What the server told us: an `initialize` result (legacy), or a `server/discover` result (modern). */
export interface SessionInfo {
  era: Era;
  protocolVersion: string;
  serverInfo: { name: string; version: string; [key: string]: unknown };
  capabilities: Record<string, unknown>;
  instructions?: string | undefined;
  /** Which session (or, modern, which discovery) this is; a 404 for an older one must not end this one. */
  sessionGeneration: number;
}

export interface ConnectionContext {
  server: string;
  configuredTransport: ConfiguredTransport;
  /** The transport in use. */
  transport: TransportKind | undefined;
  /** Decided for good: by the first successful handshake, or by a fallback. */
  latchedTransport: TransportKind | undefined;
  preferredEra: EraPreference;
  /** The era that last worked, latched like the transport; forgotten when its handshake fails, so the next attempt probes again. */
  latchedEra: Era | undefined;
  keepalive: KeepaliveSettings | false;
  session: SessionInfo | undefined;
  listenerOpenTimeoutMs: number;
  /** A listener child is running (`ready` only): LISTEN_WANTED tells it, or starts one. */
  listening: boolean;
  provenAfterMs: number;
  revive: ReviveSettings | false;
  /** The cap on the backoff while requests wait for the server. */
  waitingReconnectMs: number;
  lastError: string | undefined;
  /** The last failure was one a restart cannot fix (e.g. unsupported protocol version). */
  fatal: boolean;

  /** Why the top-level state last changed (set by the transition, reported by the state entered). */
  cause: Cause;
  /** Set: the connection decides its restarts itself; unset: its parent does. */
  restart: RestartPolicy | undefined;
  /** The connection's restarts (when it decides them itself). */
  restarts: RestartRecord;
  /** The input's jitter source, if one was given (else `Math.random`). */
  random?: (() => number) | undefined;
  /** A mass start's turn for listening streams (src/listen-turn.ts), only in such a start. */
  listenTurn?: ListenTurn | undefined;
}

/** Evidence from the runtime, reports from the children, answers from the supervisor. */
export type ConnectionEvent =
  /** Proof the session is gone: 404 on a request that carried it, or a 400 whose body names it. */
  | { type: 'SESSION_EXPIRED'; generation: number; evidence?: string }
  /** A sign that may mean a lost session or a dead server (a 400 that does not name the session, a
   *  connection broken mid-response, requests timing out with nothing answered): check with one probe. */
  | { type: 'SESSION_IN_DOUBT'; generation: number; evidence: string }
  /** A connection to the server could not be made (refused, no route, DNS, connect timeout). */
  | { type: 'SERVER_UNREACHABLE'; error: string }
  /** The transport died (a stdio child exited, a legacy SSE stream closed); `fatal` when a restart cannot help. */
  | { type: 'CONNECTION_LOST'; error: string; fatal?: boolean }
  /** The keepalive's misses (CONNECTION_LOST too). */
  | KeepaliveReport
  /** A request was refused for want of credentials (401, or 403 `insufficient_scope`) and an auth provider can fix it. */
  | { type: 'AUTHORIZATION_REQUIRED'; error: string }
  /** LISTENER_SETTLED / LISTENER_LOST / LISTENER_REFUSED_SESSION / NOTHING_TO_LISTEN. */
  | ListenerReport
  /**
   * From the runtime: what to listen for changed (modern era); the listener opens with it, started
   * if none runs. Or a stream the listener handed over ended (`resume`): a listener decides what next.
   */
  | { type: 'LISTEN_WANTED'; resume?: ListenerResume | undefined }
  | { type: 'RESTART' }
  /** A restart left the sliding window (raised by the connection that decides its restarts). */
  | { type: 'RESTART_WINDOW_PASSED'; epoch: number }
  /** Requests are held for the server while it is down: the backoff is capped (`waitingReconnectMs`). */
  | { type: 'REQUESTS_WAITING' }
  /** `fatal`: no restart was tried, the failure is one a restart cannot fix. */
  | { type: 'GIVE_UP'; reason: string; fatal?: boolean }
  /** `handle.reconnect()`: a new transport and a new session now, whatever the state. */
  | { type: 'RECONNECT' }
  | { type: 'CLOSE' }
  /** `handle.events.subscribe()`: an events subscription starts as a child (connection.events.ts). */
  | SubscribeEvent;

/** Spawns one events subscription under the connection (machines/subscription.machine.ts). */
export interface SubscribeEvent {
  type: 'SUBSCRIBE';
  /** The child's id: `subscription.<n>`. */
  id: string;
  input: SubscriptionInput;
}

/** What the connection tells its supervisor. */
export type ConnectionReport =
  | { type: 'CONNECTION_DOWN'; server: string; error: string; fatal: boolean }
  | { type: 'CONNECTION_PROVEN'; server: string };

export interface ServerRef {
  server: string;
}

/** What `connect transport` opened, and what the store knows of the server's era. */
export interface TransportOpened {
  transport: TransportKind;
  /** A fresh era verdict from the supervisor's store (a restarted process): `legacy` skips the probe. */
  storedEra?: Era | undefined;
}

export interface ConnectTransportInput extends ServerRef {
  /** What to open: `auto` means Streamable HTTP first. */
  transport: ConfiguredTransport;
}

/** What a `server/discover` probe found: a modern server (and what it said), or a legacy one. */
export type DiscoverVerdict = { era: 'modern'; session: SessionInfo } | { era: 'legacy'; evidence: string };

/** What one probe of the session found. */
export type ProbeVerdict =
  | { verdict: 'alive' }
  | { verdict: 'session lost'; evidence: string }
  | { verdict: 'unreachable'; error: string }
  | { verdict: 'unauthorized'; error: string };

/** What a failure leaves in the context: its text, and whether a restart can fix it. */
export interface Failure {
  error: string | undefined;
  fatal: boolean;
  /** The server answered busy (429/503) for the whole handshake: the wait it asked for, in ms. */
  busyMs?: number | undefined;
}

function property(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** Errors marked `fatal` (an unsupported protocol version, a command that cannot start) skip restarts. */
export function isFatal(error: unknown): boolean {
  return property(error, 'fatal') === true;
}

/** An actor's error as a failure. */
export function failureOf(error: unknown): Failure {
  const failure: Failure = { error: describeError(error), fatal: isFatal(error) };
  const busyMs = property(error, 'waitMs');
  if (typeof busyMs === 'number' && (statusOf(error) === 429 || statusOf(error) === 503)) failure.busyMs = busyMs;
  return failure;
}

/** A refusal an auth provider can fix: a 401/403 challenge that is not marked fatal (no provider configured). */
export function needsAuthorization(error: unknown): boolean {
  return property(error, 'code') === 'AUTHORIZATION_REQUIRED' && !isFatal(error);
}

/** The HTTP status an actor's error carries, if any. */
export function statusOf(error: unknown): number | undefined {
  const status = property(error, 'status');
  return typeof status === 'number' ? status : undefined;
}

/**
 * Evidence about session `generation` concerns the current session: the one generation check,
 * made by the machine's `is current session` guard and read by the runtime to route a request
 * whose failure names an older session (it is sent again, the machine is not told).
 */
export function isCurrentSession(session: SessionInfo | undefined, generation: number | undefined): boolean {
  return session !== undefined && generation === session.sessionGeneration;
}

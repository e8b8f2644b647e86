/**
 * What the runtime needs from a transport: Streamable HTTP, legacy HTTP+SSE and stdio implement
 * the same shape.
 */
import type { ListenerOpening } from '../../machines/connection-host.js';
import type { TransportKind } from '../../machines/connection.types.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/jsonrpc.js';
import type { ExchangeSignal } from '../protocol/pending.js';
import type { AuthorizationRequiredError } from '../core/errors.js';

/** Declared once, by the connection machine. */
export type { TransportKind };

/** Timer functions, injectable so tests drive reconnect delays with a simulated clock. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface TransportSink {
  /** Every message the server sends, on any stream: responses, requests, notifications. */
  onMessage(message: JsonRpcMessage): void;
  /** Whether a response to this request id is still awaited (stops resume loops for settled requests). */
  isAwaiting(id: string | number): boolean;
  /** A stream delivered something unusable (malformed JSON, not JSON-RPC); the stream goes on. */
  onStreamError(error: Error): void;
  /**
   * The transport died on its own (the legacy SSE stream closed, the child process exited).
   * The runtime fails the requests in flight and tells the connection, which reconnects.
   */
  onClosed(error: Error): void;
  /**
   * A GET resuming a response stream was refused (401, or 403 insufficient_scope): authorize as
   * for a refused request. Resolves true once new credentials are in place (resume with them),
   * false when none will come (authorization failed, or `signal` fired). Optional: without it the
   * refusal counts as a resume attempt without progress.
   */
  renewCredentials?(refusal: AuthorizationRequiredError, signal: ExchangeSignal | undefined): Promise<boolean>;
}

export interface SendOptions {
  /**
   * Aborts the request's exchanges (its POST and any resume GET): the pending request itself
   * (fired when it times out, is aborted or fails), or any AbortSignal.
   */
  signal?: ExchangeSignal | undefined;
  /** This is the `initialize` request: take the session from a 2xx answer. */
  handshake?: boolean;
  /** This request's own timeout (default: the server's requestTimeoutMs); bounds its POST and any resume. */
  timeoutMs?: number | undefined;
  /** Modern Streamable HTTP: extra request headers (SEP-2243 `mcp-param-*`, lowercase); other transports ignore them. */
  headers?: Record<string, string> | undefined;
}

/** A `subscriptions/listen` response stream (modern HTTP): its messages go to the sink as they arrive. */
export interface SubscriptionStream {
  /** Resolves when the stream ends; rejects when it breaks. */
  read(): Promise<void>;
  /** Closes the stream: for the server, the cancellation of the listen. */
  cancel(): void;
}

export interface Transport {
  readonly kind: TransportKind;
  /** False once the transport died or was closed: the next connect attempt builds a new one. */
  readonly isOpen: boolean;
  /** Makes the transport usable: nothing for Streamable HTTP, the SSE stream and its endpoint, the child process. */
  open(): Promise<void>;
  /** Bumped whenever a new session begins; errors name the generation they belong to. */
  readonly sessionGeneration: number;
  readonly hasSession: boolean;
  /**
   * Sends one message. For a request, resolves once its response was delivered to the sink;
   * rejects with a typed error otherwise (SessionExpiredError on a 404 for the current session).
   */
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void>;
  /** Forgets the session and bumps the generation, before a new handshake. */
  beginSession(): void;
  /** A modern (2026-07-28) exchange begins: no session, `protocolVersion` on every request; bumps the generation. */
  beginModern(protocolVersion: string): void;
  /** The handshake succeeded: later requests carry the negotiated protocol version. */
  completeSession(protocolVersion: string): void;
  /** Opens the server-to-client stream; `unavailable` when the server offers none. */
  openListener(lastEventId: string | undefined): Promise<ListenerOpening>;
  /**
   * Modern era, over HTTP: POSTs a `subscriptions/listen` and keeps its response stream open
   * (no idle limit, outside the message pool). Transports without it (stdio) send the listen
   * like any request: the server's messages arrive on the one channel.
   */
  openSubscription?(message: JsonRpcRequest): Promise<SubscriptionStream>;
  /**
   * Streamable HTTP, 2025 era (`resumeSession`): the session id to keep in the supervisor's store
   * (a secret: it goes nowhere else), and a stored one taken up again in place of a handshake.
   */
  sessionToKeep?(): string | undefined;
  /** False (nothing changed) for an id that is not visible ASCII: a damaged store entry never reaches a header. */
  resumeSession?(sessionId: string, protocolVersion: string): boolean;
  /** Ends the session on the server (HTTP DELETE); best effort and bounded. */
  terminateSession(): Promise<void>;
  /** Releases sockets and pools; stops the child process (stdio). */
  close(): Promise<void>;
  /** stdio only: the child's pid while it runs. */
  readonly pid?: number | undefined;
  /** stdio only: the child's most recent stderr lines, oldest first. */
  stderrTail?(): string[];
}

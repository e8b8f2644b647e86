/**
 * What a server's runtime tells its listeners, and what a request may ask for. Public types:
 * the handle and the supervisor hand these to users.
 */
import type { ConnectionState } from '../../../machines/connection.machine.js';
import type { CallEvent } from '../../observe/calls.js';
import type { JsonRpcNotification } from '../../protocol/jsonrpc.js';
import type { Progress, RetryMode } from '../../protocol/pending.js';
import type { RestoreReport } from './session-state.js';

/** Where a connection is: the connection machine's top-level states, derived from the machine. */
export type { ConnectionState };

export interface TransitionEvent {
  server: string;
  from: ConnectionState | null;
  to: ConnectionState;
  /** Why, in a few words: 'initialized', 'session expired (HTTP 404)', 'restart', … */
  cause: string;
  /** The error behind the transition, when there was one (secret-free). */
  error?: string | undefined;
  at: number;
}

/**
 * The server answered 429 or 503 (backpressure): `hold` when a Retry-After window opens (or moves
 * later by a second or more), `resume` when it ends and the waiting requests go, in order.
 */
export interface BackpressureEvent {
  server: string;
  phase: 'hold' | 'resume';
  /** The status that opened the window. */
  status: 429 | 503;
  /** `hold`: the wait applied (its `Retry-After` capped by `maxRetryAfterMs`, or the backoff), in ms. */
  waitMs: number;
  /** `hold`: when the window ends (epoch ms); undefined on `resume`. */
  until: number | undefined;
  /** Requests waiting in the gate for the window or a limit now. */
  waiting: number;
  /** Totals since the server was created: requests held by a 429/503 answer, and sent again after one. */
  held: number;
  retried: number;
  at: number;
}

export interface LogMessage {
  level: string;
  logger?: string;
  data: unknown;
}

export interface ResourceUpdated {
  uri: string;
  /** Newer servers may name the resource (`title`) and add `_meta`. */
  [key: string]: unknown;
}

export interface RuntimeEvents extends Record<string, unknown> {
  /** Every notification from the server, whatever stream carried it. */
  notification: JsonRpcNotification;
  /** `notifications/progress` (also delivered to the request's own `onprogress`). */
  progress: Progress;
  /** `notifications/message`: the server's log output. */
  log: LogMessage;
  /** `notifications/{tools,resources,prompts}/list_changed`. */
  listChanged: { list: 'tools' | 'resources' | 'prompts' };
  /** `notifications/resources/updated` for a subscribed resource (see `subscribeResource`). */
  resourceUpdated: ResourceUpdated;
  /** `notifications/elicitation/complete` (spec 2025-11-25): the user finished a URL-mode elicitation. */
  elicitationComplete: { elicitationId: string };
  /** After a new session: the subscriptions, logging level and roots established again (session-state.ts). */
  sessionRestored: RestoreReport;
  transition: TransitionEvent;
  /** A 429/503 window opened or ended (requests/request-limits.ts). */
  backpressure: BackpressureEvent;
  /** Something unusable arrived on a stream (malformed event); the connection goes on. */
  warning: Error;
  /** A request settled (only while the supervisor's `call` event has listeners: observe/calls.ts). */
  call: CallEvent;
}

export interface RequestOptions {
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Progress notifications for this request (a progressToken is added to its `_meta`). */
  onprogress?: ((progress: Progress) => void) | undefined;
  /** Restart the timeout on each progress notification, up to `maxTotalTimeoutMs`. */
  resetTimeoutOnProgress?: boolean | undefined;
  /** The hard limit with `resetTimeoutOnProgress`; default 10 × timeoutMs. */
  maxTotalTimeoutMs?: number | undefined;
  /**
   * When the connection breaks after the request was sent and before its answer: `safe` (default)
   * sends it again if repeating it is safe (a read, or a tool annotated `readOnlyHint` or
   * `idempotentHint`), `always` sends it again anyway, `never` fails it with OutcomeUnknownError.
   */
  retry?: RetryMode | undefined;
  /**
   * How long the request may wait for the server (held while it is down, or parked for a replay)
   * before it fails with a RequestTimeoutError saying why it waited; its own `timeoutMs` still
   * bounds the whole call. The gateway's `--hold`. Default: only `timeoutMs`.
   */
  holdMs?: number | undefined;
  /**
   * Told the JSON-RPC id the request is sent with, and again if a replay renumbers it: streams
   * whose notifications name their request (`events/stream`'s `subscriptionId`) route by it.
   */
  onid?: ((id: number) => void) | undefined;
}

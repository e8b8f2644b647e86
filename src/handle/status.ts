/**
 * `handle.status()`: one server's state as an application or an operator reads it, assembled from
 * its runtime. Nothing secret leaves: the session id is only said to exist, stderr lines are
 * redacted, auth is the provider's own account without tokens.
 */
import type { AuthStatus } from '../auth/types.js';
import type { Implementation } from '../protocol/messages.js';
import type { ConnectionState } from '../runtime/context/events.js';
import type { TransportKind } from '../transports/transport.js';
import type { Era } from '../../machines/connection.types.js';
import { isEnded } from '../../machines/connection.machine.js';

export interface ServerStatus {
  name: string;
  /** The connection machine's top-level state; `stopped` before start, `disabled` for a server loaded with `disabled: true`. */
  state: ConnectionState | 'stopped' | 'disabled';
  /**
   * Every machine's state now, nested ones included: `connection` (`ready.serving`), and each
   * machine child of the connection by id (`keepalive`, `listener`, `sse-fallback`). Undefined
   * while the connection actor is not running.
   */
  states?: Record<string, string> | undefined;
  transport: TransportKind | undefined;
  protocolVersion: string | undefined;
  /** `modern` (2026-07-28, per-request `_meta`) or `legacy` (an `initialize` session); undefined until the first success. */
  era?: Era | undefined;
  serverInfo: Implementation | undefined;
  /** Never the id itself: '[redacted]' while a session exists. */
  sessionId: '[redacted]' | undefined;
  restarts: number;
  lastError: string | undefined;
  /** While `failed` and a revival is due: when the next attempt is (epoch ms). */
  nextAttemptAt?: number | undefined;
  keepalive: { lastRttMs: number | undefined; missed: number };
  /**
   * Requests sent and awaiting an answer, and requests waiting (for the connection, or for a limit:
   * `throttled` of them wait for `maxInFlight`, `rateLimit` or a 429/503 window while it serves).
   */
  requests: { inFlight: number; waiting: number; throttled?: number | undefined };
  /**
   * 429/503 answers (backpressure): when the current Retry-After window ends (epoch ms, undefined
   * when none is open), and the totals of requests held by such an answer and sent again after it.
   */
  backpressure?: { until: number | undefined; held: number; retried: number } | undefined;
  /** stdio servers: the child's pid while it runs (undefined for URL servers). */
  pid?: number | undefined;
  /** stdio servers: the most recent stderr lines of the current or last process (undefined for URL servers). */
  stderrTail?: string[] | undefined;
  /** Servers with `auth`: whether credentials are held, their scope and expiry; never a token. */
  auth?: AuthStatus | undefined;
}

/** A server that serves nothing until it is started again: its connection ended (`isEnded`), or it is disabled. */
export function isDownForGood(state: ServerStatus['state']): boolean {
  return state === 'disabled' || isEnded(state);
}

/** What a status is read from: the server's runtime, as its port (runtime/server-port.ts) shows it. */
export interface StatusSource {
  readonly context: {
    readonly name: string;
    readonly config: { kind: string };
    readonly transport:
      | {
          readonly kind: TransportKind;
          readonly hasSession: boolean;
          readonly pid?: number | undefined;
          stderrTail?(): string[];
        }
      | undefined;
    readonly pending: { readonly size: number };
    readonly gate: { readonly waiting: number; readonly limited?: number };
    readonly authorization: { status(): AuthStatus | undefined };
    session(): { era: Era; protocolVersion: string; serverInfo: Implementation } | undefined;
    redact<T extends string | undefined>(text: T): T;
  };
  readonly view: {
    /** While `failed` and a revival is due: when the next attempt is (epoch ms). */
    readonly nextAttemptAt: number | undefined;
    state(): ConnectionState | 'stopped';
    lastError(): string | undefined;
    /** Every machine's state now (undefined while the connection actor is not running). */
    states(): Record<string, string> | undefined;
    /**
     * Where the last status is kept between `sup.status()` calls (a field: cheaper than a WeakMap
     * of thousands): a `Readonly<ServerStatus>`, typed by what keeps it (the runtime knows no status).
     */
    lastStatus: unknown;
    /**
     * True while the server's machines are watched (ConnectionView.watch) and none moved since the
     * last status was confirmed: then only the counters kept outside the machines are compared.
     */
    unchanged(): boolean;
    /** The last status is current (a move of a machine from now on marks it). */
    confirmed(): void;
  };
  readonly requests?: { readonly limits: { counts(): { until: number | undefined; held: number; retried: number } } };
  keepalive(): { lastRttMs: number | undefined; missed: number };
}

/**
 * The status now, frozen (its nested objects too, but the server's own `serverInfo` and `auth`):
 * for a URL server without auth the same object is returned while it would read the same, so
 * `sup.status()` of 10,000 servers compares instead of deriving (and the supervisor keeps its
 * table of all while no entry changed). What is kept per server is that object only: no snapshot,
 * no derived states, no record of the counters (they are compared with the status itself).
 */
export function sharedStatus(source: StatusSource, restartsOf: (name: string) => number): Readonly<ServerStatus> {
  const { context, view } = source;
  const last = view.lastStatus as Readonly<ServerStatus> | undefined;
  if (last !== undefined && view.unchanged() && sameCounters(last, source)) return last;
  const status = deriveStatus(source, restartsOf(context.name), view.states());
  if (context.config.kind === 'command' || status.auth !== undefined) return frozen(status);
  // A move that changed nothing a status says (a keepalive step) keeps the object, and the table.
  if (last === undefined || !sameStatus(last, status)) view.lastStatus = frozen(status);
  view.confirmed();
  return view.lastStatus as Readonly<ServerStatus>;
}

/** What a status reads outside the machines (requests, limits, the transport, the revival) reads as in `last`. */
function sameCounters(last: Readonly<ServerStatus>, source: StatusSource): boolean {
  const { transport, gate } = source.context;
  const waiting = gate.waiting;
  const requests = last.requests;
  const backpressure = last.backpressure;
  const counts = source.requests?.limits.counts();
  return (
    requests.waiting === waiting &&
    requests.inFlight === Math.max(0, source.context.pending.size - waiting) &&
    requests.throttled === (gate.limited ?? 0) &&
    last.transport === transport?.kind &&
    (last.protocolVersion === undefined || (last.sessionId !== undefined) === (transport?.hasSession === true)) &&
    last.nextAttemptAt === (last.state === 'failed' ? source.view.nextAttemptAt : undefined) &&
    (counts === undefined
      ? backpressure === undefined
      : backpressure !== undefined &&
        counts.until === backpressure.until &&
        counts.held === backpressure.held &&
        counts.retried === backpressure.retried)
  );
}

/** Two statuses of a URL server read alike (top-level fields, and the nested objects field by field). */
function sameStatus(a: Readonly<ServerStatus>, b: ServerStatus): boolean {
  return (
    a.state === b.state &&
    a.transport === b.transport &&
    a.protocolVersion === b.protocolVersion &&
    a.era === b.era &&
    a.serverInfo === b.serverInfo &&
    a.sessionId === b.sessionId &&
    a.restarts === b.restarts &&
    a.lastError === b.lastError &&
    a.nextAttemptAt === b.nextAttemptAt &&
    a.pid === b.pid &&
    a.keepalive.lastRttMs === b.keepalive.lastRttMs &&
    a.keepalive.missed === b.keepalive.missed &&
    a.requests.inFlight === b.requests.inFlight &&
    a.requests.waiting === b.requests.waiting &&
    a.requests.throttled === b.requests.throttled &&
    sameRecord(a.backpressure, b.backpressure) &&
    sameRecord(a.states, b.states)
  );
}

function sameRecord(a: object | undefined, b: object | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const key in x) if (!(key in y) || x[key] !== y[key]) return false;
  for (const key in y) if (!(key in x)) return false;
  return true;
}

/**
 * The status now; `restarts` is the supervisor's count for this server. A fresh object each call
 * (the caller's to change). The memo of sharedStatus is used when `sup.status()` built one, never
 * built here: a handle's status is a copy anyway, and an idle connection read once (as `connect()`
 * reads it) would hold the memo and its snapshot observers for its whole life (~1.5 KB).
 */
export function serverStatus(source: StatusSource, restarts: number): ServerStatus {
  const status =
    source.view.lastStatus === undefined
      ? deriveStatus(source, restarts, source.view.states())
      : sharedStatus(source, () => restarts);
  return {
    ...status,
    states: status.states && { ...status.states },
    keepalive: { ...status.keepalive },
    requests: { ...status.requests },
    backpressure: status.backpressure && { ...status.backpressure },
    stderrTail: status.stderrTail && [...status.stderrTail],
  };
}

function frozen(status: ServerStatus): Readonly<ServerStatus> {
  Object.freeze(status.states);
  Object.freeze(status.keepalive);
  Object.freeze(status.requests);
  Object.freeze(status.backpressure);
  Object.freeze(status.stderrTail);
  return Object.freeze(status);
}

function deriveStatus(
  source: StatusSource,
  restarts: number,
  states: Record<string, string> | undefined,
): ServerStatus {
  const { context, view } = source;
  const { transport, gate } = context;
  const session = context.session();
  const state = view.state();
  return {
    name: context.name,
    state,
    states,
    transport: transport?.kind,
    protocolVersion: session?.protocolVersion,
    era: session?.era,
    serverInfo: session?.serverInfo,
    sessionId: session && transport?.hasSession ? '[redacted]' : undefined,
    restarts,
    lastError: view.lastError(),
    nextAttemptAt: state === 'failed' ? view.nextAttemptAt : undefined,
    keepalive: source.keepalive(),
    requests: {
      inFlight: Math.max(0, context.pending.size - gate.waiting),
      waiting: gate.waiting,
      throttled: gate.limited ?? 0,
    },
    backpressure: source.requests?.limits.counts(),
    pid: transport?.pid,
    stderrTail:
      context.config.kind === 'command'
        ? (transport?.stderrTail?.() ?? []).map((line) => context.redact(line))
        : undefined,
    auth: context.authorization.status(),
  };
}

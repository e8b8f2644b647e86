/**
 * `handle.status()`: one server's state as an application or an operator reads it, assembled from
 * its runtime. Nothing secret leaves: the session id is only said to exist, stderr lines are
 * redacted, auth is the provider's own account without tokens.
 */
import type { AuthStatus } from './auth/types.js';
import type { Implementation } from './protocol/messages.js';
import type { ConnectionState } from './runtime/context/events.js';
import type { TransportKind } from './transports/transport.js';

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
  era?: 'legacy' | 'modern' | undefined;
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

/** What a status is read from; the server's runtime has each member. */
export interface StatusSource {
  readonly name: string;
  readonly config: { kind: string };
  readonly transportKind: TransportKind | undefined;
  readonly transport:
    { readonly hasSession: boolean; readonly pid?: number | undefined; stderrTail?(): string[] } | undefined;
  readonly nextAttemptAt: number | undefined;
  readonly pending: { readonly size: number };
  readonly gate: { readonly waiting: number; readonly limited?: number };
  readonly limits?: { counts(): { until: number | undefined; held: number; retried: number } };
  readonly authorization: { status(): AuthStatus | undefined };
  state(): ConnectionState | 'stopped';
  session(): { era: 'legacy' | 'modern'; protocolVersion: string; serverInfo: Implementation } | undefined;
  lastError(): string | undefined;
  keepalive(): { lastRttMs: number | undefined; missed: number };
  states?(): Record<string, string> | undefined;
  /**
   * The connection's snapshot now (a status is derived again only when it or a counter changed),
   * and where the last status is kept between calls (a field: cheaper than a WeakMap of thousands).
   */
  readonly view?: {
    snapshot(): { readonly children: object } | undefined;
    /** `states()`, frozen and shared: a new object only when a snapshot changed. */
    currentStates(): Readonly<Record<string, string>> | undefined;
    lastStatus: unknown;
    /**
     * True while the server's machines are watched (ConnectionView.watch), none moved since the
     * last status was derived or confirmed, and the connection's snapshot is still `snapshot`:
     * then only the counters kept outside the machines are compared.
     */
    unchanged(snapshot: object): boolean;
    /** The last status is confirmed as current. */
    confirmed(): void;
  };
  redact<T extends string | undefined>(text: T): T;
}

/** What a status was derived from: the snapshots and counters it reads. */
interface Derived {
  snapshot: object;
  /** currentStates(): the same object while the connection's and its children's snapshots are (keepalive's too). */
  states: unknown;
  restarts: number;
  transport: StatusSource['transport'];
  hasSession: boolean | undefined;
  nextAttemptAt: number | undefined;
  pending: number;
  waiting: number;
  limited: number | undefined;
  backpressure: ServerStatus['backpressure'];
  status: Readonly<ServerStatus>;
}

const sameCounts = (a: ServerStatus['backpressure'], b: ServerStatus['backpressure']): boolean =>
  a === b || (a?.until === b?.until && a?.held === b?.held && a?.retried === b?.retried);

/**
 * The status now, frozen (its nested objects too, but the server's own `serverInfo` and `auth`):
 * for a URL server without auth the same object is returned while nothing it is read from
 * changed, so `sup.status()` of 10,000 servers compares instead of deriving (and the supervisor
 * keeps its table of all while no entry changed).
 */
export function sharedStatus(source: StatusSource, restartsOf: (name: string) => number): Readonly<ServerStatus> {
  const view = source.view;
  const last = view?.lastStatus as Derived | undefined;
  if (last !== undefined && view!.unchanged(last.snapshot) && sameCounters(last, source)) return last.status;
  const restarts = restartsOf(source.name);
  const snapshot = view?.snapshot();
  if (
    view === undefined ||
    snapshot === undefined ||
    source.config.kind === 'command' ||
    source.authorization.status() !== undefined
  )
    return frozen(deriveStatus(source, restarts, source.states?.()));
  const states = view.currentStates();
  const transport = source.transport;
  const backpressure = source.limits?.counts();
  if (
    last?.snapshot === snapshot &&
    last.states === states &&
    last.restarts === restarts &&
    sameCounters(last, source)
  ) {
    view.confirmed();
    return last.status;
  }
  const status = frozen(deriveStatus(source, restarts, states));
  view.lastStatus = {
    snapshot,
    states,
    restarts,
    transport,
    hasSession: transport?.hasSession,
    nextAttemptAt: source.nextAttemptAt,
    pending: source.pending.size,
    waiting: source.gate.waiting,
    limited: source.gate.limited,
    backpressure,
    status,
  } satisfies Derived;
  view.confirmed();
  return status;
}

/** What a status reads outside the machines (requests, limits, the transport, the revival) is as it was. */
function sameCounters(last: Derived, source: StatusSource): boolean {
  const transport = source.transport;
  const limits = source.limits;
  return (
    last.pending === source.pending.size &&
    last.waiting === source.gate.waiting &&
    last.limited === source.gate.limited &&
    last.transport === transport &&
    last.hasSession === transport?.hasSession &&
    last.nextAttemptAt === source.nextAttemptAt &&
    (limits === undefined ? last.backpressure === undefined : sameCounts(last.backpressure, limits.counts()))
  );
}

/**
 * The status now; `restarts` is the supervisor's count for this server. A fresh object each call
 * (the caller's to change). The memo of sharedStatus is used when `sup.status()` built one, never
 * built here: a handle's status is a copy anyway, and an idle connection read once (as `connect()`
 * reads it) would hold the memo and its snapshot observers for its whole life (~1.5 KB).
 */
export function serverStatus(source: StatusSource, restarts: number): ServerStatus {
  const status =
    source.view?.lastStatus === undefined
      ? deriveStatus(source, restarts, source.states?.())
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
  const session = source.session();
  const state = source.state();
  return {
    name: source.name,
    state,
    states,
    transport: source.transportKind,
    protocolVersion: session?.protocolVersion,
    era: session?.era,
    serverInfo: session?.serverInfo,
    sessionId: session && source.transport?.hasSession ? '[redacted]' : undefined,
    restarts,
    lastError: source.lastError(),
    nextAttemptAt: state === 'failed' ? source.nextAttemptAt : undefined,
    keepalive: source.keepalive(),
    requests: {
      inFlight: Math.max(0, source.pending.size - source.gate.waiting),
      waiting: source.gate.waiting,
      throttled: source.gate.limited ?? 0,
    },
    backpressure: source.limits?.counts(),
    pid: source.transport?.pid,
    stderrTail:
      source.config.kind === 'command'
        ? (source.transport?.stderrTail?.() ?? []).map((line) => source.redact(line))
        : undefined,
    auth: source.authorization.status(),
  };
}

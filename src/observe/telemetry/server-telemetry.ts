/**
 * One server's telemetry: built the first time a request or a transition finds an OpenTelemetry
 * SDK registered (a server that never sees one holds nothing but an empty field). The runtime
 * calls it from a handful of one-line hooks (`runtime.telemetry?.…`); everything it records is
 * derived here:
 *
 * - a CLIENT span and a duration per request and notification, with "held while <state>" and
 *   "replayed after <what was lost>" events and the attempt number;
 * - a SERVER span per request the server sends (and per notification that carries trace
 *   context), continuing the trace named in its `_meta`, active while the handler runs;
 * - a `mcp_supervisor.connect` / `mcp_supervisor.recover` span per episode away from `ready`,
 *   with one event per transition and its plain-words cause;
 * - the session duration, the transitions, restarts, re-initializations, replays, held
 *   requests, keepalive round trips and misses, stdio process restarts.
 *
 * The lifecycle is read from the machine's facts (machines/connection.facts.ts), one move at a
 * time: `FACT_REACTIONS` says what each fact means here; no state name is looked up.
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { ConnectionFact, FactOf, SessionEndReason } from '../../../machines/connection.facts.js';
import type { ServerConfig } from '../../config/server-config.js';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { TransportKind } from '../../transports/transport.js';
import { ATTR, connectionAttributes, operationAttributes, targetOf } from './attributes.js';
import { currentInstruments, forgetConnection, observeConnection, type Instruments } from './metrics.js';
import { carriedMeta, currentTracer, extractContext, Operation, withTraceContext } from './tracing.js';

/** What the telemetry reads from a server's runtime. */
/** What the telemetry reads a server from (its runtime); the context's `telemetry` slot is written here alone. */
export interface TelemetrySource {
  readonly context: {
    readonly config: ServerConfig;
    readonly transport: { readonly kind: TransportKind } | undefined;
    telemetry: ServerTelemetry | undefined;
    session(): { protocolVersion: string } | undefined;
    redact<T extends string | undefined>(text: T): T;
  };
  readonly view: { state(): string };
}

export interface ObservedTransition {
  from: string | null;
  to: string;
  cause: string;
  error?: string | undefined;
}

/** What a request waiting for a release lost, by why the connection stopped serving. */
const LOST: Record<SessionEndReason, string | undefined> = {
  expired: 'session expiry',
  'connection lost': 'connection loss',
  closed: undefined,
  'reconnect requested': undefined,
};

/** A session's end as its `error.type` (none for a close or a reconnect). */
const SESSION_END_ERRORS: Record<SessionEndReason, string | undefined> = {
  expired: 'session_expired',
  'connection lost': 'connection_lost',
  closed: undefined,
  'reconnect requested': undefined,
};

/** How a move ends the episode away from `ready`: serving again (`ok`) or failed (`error`). */
type EpisodeEnd = 'ok' | 'error' | undefined;

/** What each of the machine's facts means for the telemetry; the move's episode end, if it ends one. */
export const FACT_REACTIONS = {
  'session started': (telemetry, fact) => telemetry.sessionStarted(fact),
  'session ended': (telemetry, fact, instruments) => telemetry.sessionEnded(fact, instruments),
  'session confirmed': (telemetry) => telemetry.servingAgain(),
  'session in doubt': (telemetry) => telemetry.servingStopped('a session check'),
  'authorization required': (telemetry) => telemetry.servingStopped('authorization'),
  authorized: (telemetry, fact) => (fact.sessionKept ? telemetry.servingAgain() : undefined),
  restarted: (telemetry, _fact, instruments) => {
    instruments?.restarts.add(1, telemetry.attributes);
    return undefined;
  },
  'gave up': () => 'error',
  'close requested': () => 'ok',
  closed: (telemetry) => {
    forgetConnection(telemetry);
    return 'ok';
  },
} satisfies {
  [K in ConnectionFact['type']]?: (
    telemetry: ServerTelemetry,
    fact: FactOf<K>,
    instruments: Instruments | undefined,
  ) => EpisodeEnd;
};

function reactTo(telemetry: ServerTelemetry, fact: ConnectionFact, instruments: Instruments | undefined): EpisodeEnd {
  const react = (
    FACT_REACTIONS as Record<string, (t: ServerTelemetry, f: ConnectionFact, i?: Instruments) => EpisodeEnd>
  )[fact.type];
  return react?.(telemetry, fact, instruments);
}

/**
 * Where every copy of `@opentelemetry/api` 1.x keeps what was registered (its global registry):
 * absent until an application registers anything, so one property read settles the common case
 * of no SDK. The tests register the SDK and fail if this ever stops being where it registers.
 */
const API_REGISTRY = Symbol.for('opentelemetry.js.api.1');

/** Starts an operation when an SDK is registered; undefined (and nothing allocated) otherwise. */
export function startOperation(
  source: TelemetrySource,
  method: string,
  params: Record<string, unknown> | undefined,
): Operation | undefined {
  if ((globalThis as Record<symbol, unknown>)[API_REGISTRY] === undefined) return undefined;
  const tracer = currentTracer();
  const instruments = currentInstruments();
  if (!tracer && !instruments) return undefined;
  return (source.context.telemetry ??= new ServerTelemetry(source)).start(method, params, instruments);
}

/** Records a move: its transition and the facts that came with it (builds the server's telemetry when an SDK is registered). */
export function observeMove(
  source: TelemetrySource,
  transition: ObservedTransition,
  facts: readonly ConnectionFact[],
): void {
  if ((globalThis as Record<symbol, unknown>)[API_REGISTRY] === undefined) return;
  if (!source.context.telemetry && !currentTracer() && !currentInstruments()) return;
  (source.context.telemetry ??= new ServerTelemetry(source)).onMove(transition, facts);
}

export class ServerTelemetry {
  /** The connection's attributes (server, transport, protocol version once known). */
  attributes: Attributes;
  /** Who the server is, for the state gauge. */
  identity: Attributes;
  /** Each method's (and tool's or prompt's) attributes, built once: a handful per server. */
  private readonly byOperation = new Map<string, Attributes>();
  /** Requests in flight or waiting, by their pending entry. */
  private readonly operations = new Map<object, Operation>();
  /** The span of the current episode away from `ready` (connect, recover). */
  private episode: Span | undefined;
  private lost = 'reconnect';
  /** In `ready`: what stops it names what the waiting requests lost. */
  private serving = false;
  private sessionStartedAt: number | undefined;
  private protocolVersion: string | undefined;
  private readonly redact: (text: string) => string;

  constructor(private readonly source: TelemetrySource) {
    this.identity = connectionAttributes(source.context.config, source.context.transport?.kind);
    this.attributes = this.identity;
    this.redact = (text) => source.context.redact(text);
    observeConnection(this);
  }

  currentState(): string {
    return this.source.view.state();
  }

  start(method: string, params: Record<string, unknown> | undefined, instruments: Instruments | undefined): Operation {
    if (this.protocolVersion === undefined) this.learnSession();
    const target = targetOf(method, params);
    const key = target === undefined ? method : `${method}\u0000${target}`;
    let attributes = this.byOperation.get(key);
    if (!attributes) {
      attributes = operationAttributes(this.attributes, method, target);
      if (this.byOperation.size < 256) this.byOperation.set(key, attributes); // prompt names are the caller's: bounded
    }
    const tracer = currentTracer();
    if (!tracer) return new Operation(undefined, params, attributes, instruments, this.redact);
    // The handshake belongs to its connect or recover episode; anything else to the caller's context.
    const parent =
      method === 'initialize' && this.episode ? trace.setSpan(context.active(), this.episode) : context.active();
    const span = tracer.startSpan(
      target ? `${method} ${target}` : method,
      { kind: SpanKind.CLIENT, attributes },
      parent,
    );
    return new Operation(
      span,
      withTraceContext(params, trace.setSpan(parent, span)),
      attributes,
      instruments,
      this.redact,
    );
  }

  /** Follows a request through the gate until it settles. */
  track(request: { readonly method: string }, promise: Promise<unknown>, operation: Operation): void {
    this.operations.set(request, operation);
    const forget = () => this.operations.delete(request);
    promise.then(forget, forget);
    operation.settle(promise, request.method);
  }

  /** It goes on the wire (again: a replay, with a new id). */
  onSend(request: { readonly id: number; readonly method: string }): void {
    const operation = this.operations.get(request);
    if (!operation) return;
    const attempt = ++operation.attempt;
    const id = String(request.id);
    operation.span?.setAttribute(ATTR.requestId, id).setAttribute(ATTR.attempt, attempt);
    if (attempt === 1) return;
    const status = operation.retryAfterStatus;
    if (status !== undefined) {
      operation.retryAfterStatus = undefined;
      operation.span?.addEvent(`retried after HTTP ${status}`, { [ATTR.attempt]: attempt, [ATTR.requestId]: id });
      currentInstruments()?.retried.add(1, { ...this.attributes, [ATTR.methodName]: request.method });
      return;
    }
    operation.span?.addEvent(`replayed after ${this.lost}`, { [ATTR.attempt]: attempt, [ATTR.requestId]: id });
    currentInstruments()?.replays.add(1, { ...this.attributes, [ATTR.methodName]: request.method });
  }

  /**
   * It waits for a limit while the connection serves: `retry_after` (a 429/503 window),
   * `max_in_flight` or `rate_limit`.
   */
  onThrottled(request: object, reason: 'retry_after' | 'max_in_flight' | 'rate_limit'): void {
    const operation = this.operations.get(request);
    if (!operation) return;
    operation.span?.addEvent(`throttled: ${reason}`, { [ATTR.throttleReason]: reason });
    currentInstruments()?.throttled.add(1, { ...this.attributes, [ATTR.throttleReason]: reason });
  }

  /** Answered 429/503: its next send is a retry (counted apart from replays). */
  onRetry(request: object, status: number): void {
    const operation = this.operations.get(request);
    if (operation) operation.retryAfterStatus = status;
  }

  /** It waits in the gate: the connection is not serving. */
  onHeld(request: object, state: string): void {
    const operation = this.operations.get(request);
    if (!operation) return;
    operation.held = true;
    operation.span?.addEvent(`held while ${state}`, { [ATTR.state]: state });
    currentInstruments()?.held.add(1, { ...this.attributes, [ATTR.state]: state });
  }

  onMove(transition: ObservedTransition, facts: readonly ConnectionFact[]): void {
    const instruments = currentInstruments();
    const { from, to } = transition;
    instruments?.transitions.add(1, { ...this.attributes, [ATTR.state]: to, [ATTR.fromState]: from ?? 'none' });
    let end: EpisodeEnd;
    for (const fact of facts) end = reactTo(this, fact, instruments) ?? end;
    this.recordEpisode(transition, end);
  }

  /** A new session (perhaps another version or transport); the modern era has no session to time. */
  sessionStarted(fact: FactOf<'session started'>): EpisodeEnd {
    this.learnSession(fact.protocolVersion, fact.transport);
    if (fact.era === 'legacy') this.sessionStartedAt = performance.now();
    return this.servingAgain();
  }

  sessionEnded(fact: FactOf<'session ended'>, instruments: Instruments | undefined): EpisodeEnd {
    this.servingStopped(LOST[fact.reason]);
    if (fact.reason === 'expired' && fact.era === 'legacy') instruments?.reinitializations.add(1, this.attributes);
    if (this.sessionStartedAt === undefined) return undefined;
    const seconds = (performance.now() - this.sessionStartedAt) / 1000;
    const errorType = SESSION_END_ERRORS[fact.reason];
    this.sessionStartedAt = undefined;
    instruments?.sessionDuration.record(
      seconds,
      errorType ? { ...this.attributes, [ATTR.errorType]: errorType } : this.attributes,
    );
    return undefined;
  }

  servingAgain(): EpisodeEnd {
    this.serving = true;
    return 'ok';
  }

  /** Requests wait from now on; what they lost is said when one is replayed. */
  servingStopped(lost: string | undefined): EpisodeEnd {
    if (this.serving && lost !== undefined) this.lost = lost;
    this.serving = false;
    return undefined;
  }

  /** One keepalive probe: its round trip, or a miss. */
  onProbe<T extends { skipped: boolean; rttMs?: number }>(probe: Promise<T>): Promise<T> {
    return probe.then(
      (output) => {
        if (!output.skipped && output.rttMs !== undefined)
          currentInstruments()?.keepaliveRtt.record(output.rttMs / 1000, this.attributes);
        return output;
      },
      (error: unknown) => {
        currentInstruments()?.keepaliveMisses.add(1, this.attributes);
        throw error;
      },
    );
  }

  onStdioRestart(): void {
    currentInstruments()?.stdioRestarts.add(1, this.attributes);
  }

  /** A request from the server: its handler runs inside a SERVER span continuing the trace in its `_meta`. */
  serve(
    request: JsonRpcRequest,
    handler: { handle(request: JsonRpcRequest): Promise<JsonRpcMessage | undefined> },
  ): void {
    const tracer = currentTracer();
    if (!tracer) {
      void handler.handle(request);
      return;
    }
    const parent = extractContext(carriedMeta(request.params));
    const attributes = { ...this.attributes, [ATTR.methodName]: request.method, [ATTR.requestId]: String(request.id) };
    const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
    void context
      .with(trace.setSpan(parent, span), () => handler.handle(request))
      .then((response) => {
        if (response && 'error' in response) {
          const code = String(response.error.code);
          span.setAttributes({ [ATTR.errorType]: code, [ATTR.rpcStatusCode]: code });
          span.setStatus({ code: SpanStatusCode.ERROR, message: this.redact(response.error.message) });
        }
        span.end();
      });
  }

  /** A notification from the server: delivered inside a SERVER span when it carries trace context. */
  receive(notification: JsonRpcNotification, target: { deliver(notification: JsonRpcNotification): void }): void {
    const meta = carriedMeta(notification.params);
    const tracer = meta && currentTracer();
    if (!tracer) return target.deliver(notification);
    const parent = extractContext(meta);
    const attributes = { ...this.attributes, [ATTR.methodName]: notification.method };
    const span = tracer.startSpan(notification.method, { kind: SpanKind.SERVER, attributes }, parent);
    try {
      context.with(trace.setSpan(parent, span), () => target.deliver(notification));
    } finally {
      span.end();
    }
  }

  /** The session's protocol version and the transport it runs on (after a fallback: legacy SSE). */
  private learnSession(version?: string, transport?: TransportKind): void {
    version ??= this.source.context.session()?.protocolVersion;
    if (version === undefined) return;
    this.protocolVersion = version;
    this.attributes = {
      ...connectionAttributes(this.source.context.config, transport ?? this.source.context.transport?.kind),
      [ATTR.protocolVersion]: version,
    };
  }

  /** Connect and recover episodes: one span from leaving `ready` (or starting) until serving again, failing or closing. */
  private recordEpisode({ from, to, cause, error }: ObservedTransition, end: EpisodeEnd): void {
    const tracer = currentTracer();
    if (!tracer) {
      this.episode = undefined;
      return;
    }
    if (!this.episode && end !== 'ok') {
      const name = from === null ? 'mcp_supervisor.connect' : 'mcp_supervisor.recover';
      const attributes = { ...this.attributes, [ATTR.cause]: cause };
      this.episode = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, ROOT_CONTEXT);
    }
    const episode = this.episode;
    if (!episode) return;
    const event: Attributes = { [ATTR.fromState]: from ?? 'none', [ATTR.state]: to, [ATTR.cause]: cause };
    if (error !== undefined) event[ATTR.error] = this.redact(error);
    episode.addEvent(`${to}: ${cause}`, event);
    if (end === undefined) return;
    if (end === 'error') episode.setStatus({ code: SpanStatusCode.ERROR, message: this.redact(error ?? cause) });
    episode.end();
    this.episode = undefined;
  }
}

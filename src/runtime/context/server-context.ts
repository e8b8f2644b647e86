/**
 * What the parts of one server's runtime share (server-runtime.ts builds it and hands it to
 * each): who the server is, its pending requests and the gate where they wait, the transport in
 * the slot, the facts of the current session, and the two ways out — events for the user and
 * `tell()` for the connection machine. One object per server: the parts keep nothing else in
 * common.
 */
import type { ActorRefFrom, SnapshotFrom } from 'xstate';
import type { connectionMachine, ConnectionEvent, SessionInfo } from '../../../machines/connection.machine.js';
import type { ServerConfig } from '../../config/server-config.js';
import { secretSources } from '../../config/server-config.js';
import { Emitter } from '../../core/emitter.js';
import { redact, secretsOf, type Secrets } from '../../core/redact.js';
import type { CallObserver } from '../../observe/calls.js';
import type { ServerTelemetry, TelemetrySource } from '../../observe/telemetry/server-telemetry.js';
import type { PendingRequest, PendingRequests } from '../../protocol/pending.js';
import type { ToolOutputSchemas } from '../../protocol/tool-output.js';
import type { Store } from '../../store/types.js';
import type { Timers, Transport } from '../../transports/transport.js';
import { Authorization } from '../authorization/authorization.js';
import { authorizationContext, serverIdentity } from '../stored/server-identity.js';
import { StoredState } from '../stored/stored-state.js';
import type { RuntimeEvents } from './events.js';
import { RequestGate } from './request-gate.js';
import type { SessionFacts } from './session-facts.js';
import { SessionState } from './session-state.js';

export type ConnectionRef = ActorRefFrom<typeof connectionMachine>;
export type ConnectionSnapshot = SnapshotFrom<typeof connectionMachine>;

/**
 * The context as the face reads it (the handle, its tools and tasks, status(), the settings): who
 * the server is and what it learned, nothing it could write. Each field the runtime writes has
 * one writer, which holds the `ServerContext` itself: the transport and `closing` the slot
 * (transport/transport-slot.ts), the session's facts the opening (session/session-opening.ts), the
 * output schemas the request path, `telemetry` the telemetry (observe/telemetry), `calls` the
 * supervisor's relay, `system` the supervisor that starts the actor.
 */
export interface ServerContextView {
  readonly name: string;
  readonly config: ServerConfig;
  readonly timers: Timers | undefined;
  readonly events: Emitter<RuntimeEvents>;
  /** Who the server is for the store and for task references (server-identity.ts). */
  readonly identity: string;
  readonly stored: StoredState | undefined;
  readonly authorization: Pick<Authorization, 'status'>;
  readonly pending: { readonly size: number };
  readonly gate: Pick<RequestGate, 'phase' | 'waiting' | 'limited'>;
  readonly transport: Readonly<Transport> | undefined;
  readonly facts: Readonly<SessionFacts> | undefined;
  readonly sessionState: SessionState;
  readonly outputSchemas: ToolOutputSchemas | undefined;
  readonly telemetry: ServerTelemetry | undefined;
  /** The actor system the connection actor runs in: its subscriptions are children of that actor (src/events/). */
  readonly system: { get(systemId: string): unknown } | undefined;
  /** The session the connection machine holds now (its context), if any. */
  session(): SessionInfo | undefined;
  redact<T extends string | undefined>(text: T): T;
}

/** The whole context, read only: the parts of the runtime that write none of its fields take it this way. */
export type ReadOnlyContext = Readonly<Omit<ServerContext, 'adopt'>>;

export class ServerContext implements ServerContextView {
  readonly name: string;
  readonly events = new Emitter<RuntimeEvents>();
  readonly authorization: Authorization;
  readonly gate: RequestGate;
  private passed: WeakSet<PendingRequest> | undefined = undefined;
  /** The transport in the slot (transport/transport-slot.ts opens, replaces and closes it). */
  transport: Transport | undefined = undefined;
  /** The facts of the current session, as its handshake or discovery returned them; undefined while none is open. */
  facts: SessionFacts | undefined = undefined;
  /** A session was opened once: from then on a stdio process that dies is restarted, not failed. */
  connectedBefore = false;
  /** The connection is closing or closed: a transport still opening is closed at once, nothing is held. */
  closing = false;
  /** Built once an OpenTelemetry SDK is registered (observe/telemetry); undefined costs nothing. */
  telemetry: ServerTelemetry | undefined = undefined;
  /** Set only while someone listens to the supervisor's `call` events (observe/calls.ts); undefined costs nothing. */
  calls: CallObserver | undefined = undefined;
  /** The actor system the connection actor runs in (set by the supervisor). */
  system: { get(systemId: string): unknown } | undefined = undefined;
  /** The tools' output schemas, from the first tools list on (never with `validateToolOutput: false`). */
  outputSchemas: ToolOutputSchemas | undefined = undefined;
  /** What this server keeps in the supervisor's store; undefined without a store (nothing is stored). */
  readonly stored: StoredState | undefined;
  /** Subscriptions, logging level and roots (created by the first of them: an idle server holds none). */
  private established: SessionState | undefined = undefined;
  /** Built on first use (an error or a status), not per idle server. */
  private secrets: Secrets | undefined = undefined;
  private digest: string | undefined = undefined;

  constructor(
    readonly config: ServerConfig,
    /** The timers of this server's transports and waits (tests pass hand-fired ones). */
    readonly timers: Timers | undefined,
    /** What the telemetry reads the server from (the runtime itself). */
    readonly observed: TelemetrySource,
    /** Built by the runtime: its cancellations and timeouts go to the request path and recovery. */
    readonly pending: PendingRequests,
    /** The supervisor's store: credentials (the OAuth provider), era verdicts, catalogs, task references. */
    store?: Store,
  ) {
    this.name = config.name;
    this.stored =
      store &&
      new StoredState(
        store,
        serverIdentity(config),
        config.name,
        (error) => this.events.emit('warning', error),
        authorizationContext(config),
      );
    this.authorization = new Authorization(config, config.name, {
      store,
      onWarning: (error) => this.events.emit('warning', error),
    });
    this.gate = new RequestGate(config.maxQueuedRequests);
  }

  /** Who the server is for the store and for task references (server-identity.ts), not its display name. */
  get identity(): string {
    return this.stored?.server ?? (this.digest ??= serverIdentity(this.config));
  }

  /** Requests sent past the gate by the machine's own effects (discover, probes): their failures are the machine's business. */
  get pastGate(): WeakSet<PendingRequest> {
    return (this.passed ??= new WeakSet());
  }

  /** What the client established on its sessions, re-established on every new one (session-state.ts). */
  get sessionState(): SessionState {
    return (this.established ??= new SessionState());
  }

  /** The session state, if anything was ever established (reading it creates nothing). */
  get savedSessionState(): SessionState | undefined {
    return this.established;
  }

  /** A handshake or discovery succeeded: its facts are the session's, read from here until the next. */
  adopt(facts: SessionFacts): void {
    this.facts = facts;
    this.connectedBefore = true;
  }

  snapshot(): ConnectionSnapshot | undefined {
    return (this.system?.get(this.name) as ConnectionRef | undefined)?.getSnapshot();
  }

  /** The session the connection machine holds now (its context), if any. */
  session(): SessionInfo | undefined {
    return this.snapshot()?.context.session;
  }

  tell(event: ConnectionEvent): void {
    (this.system?.get(this.name) as ConnectionRef | undefined)?.send(event);
  }

  /** Text that leaves the runtime (transition errors, status) passes the one redaction rule. */
  redact<T extends string | undefined>(text: T): T {
    if (text === undefined) return text;
    this.secrets ??= secretsOf([secretSources(this.config)]);
    return redact(text, this.secrets) as T;
  }
}

/**
 * Everything one server needs outside the machine: its transport, the pending-request map, the
 * gate that holds requests while the connection is not serving, and message routing. The
 * connection machine's actors call into it; the facade's requests go straight through it.
 */
import type { AnyEventObject } from 'xstate';
import { describeCause, eventError, topLevelState, type ConfiguredTransport, type ConnectionEvent, type SessionInfo } from '../machines/connection.machine.js';
import type { ProbeOutput } from '../machines/keepalive.machine.js';
import type { ServerConfig } from './config.js';
import { Emitter } from './emitter.js';
import { AuthorizationError, ConnectionClosedError, describeError, type AuthorizationRequiredError, FallbackFailedError, QueueFullError, SessionExpiredError } from './protocol/errors.js';
import { isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest } from './protocol/jsonrpc.js';
import type { ClientCapabilities, Implementation } from './protocol/messages.js';
import { handshake } from './handshake.js';
import { dispatchNotification } from './notifications.js';
import { capabilitiesFor, NO_ELICITATION_OPTIONS, NO_HANDLERS, ServerRequests, type ClientHandlers, type ElicitationOptions } from './server-requests.js';
import { PendingRequests, type PendingRequest } from './protocol/pending.js';
import { RequestGate, type GatePhase } from './request-gate.js';
import { isAbortError } from './transports/http-body.js';
import { createTransport } from './transports/create-transport.js';
import type { Timers, Transport, TransportKind, TransportSink } from './transports/transport.js';
import type { ConnectionState, RequestOptions, RuntimeEvents } from './runtime-events.js';
import { KeepaliveProbe } from './keepalive-probe.js';
import { Authorization } from './authorization.js';

export type { ConnectionState, LogMessage, RequestOptions, RuntimeEvents, TransitionEvent } from './runtime-events.js';

export interface RuntimeOptions {
  config: ServerConfig;
  clientInfo: Implementation;
  handlers?: ClientHandlers | undefined;
  elicitation?: ElicitationOptions | undefined;
  timers?: Timers | undefined;
}

/** The runtime is its transports' sink: a sink object of four closures would cost ~0.3 KB per server. */
export class ServerRuntime implements TransportSink {
  readonly name: string;
  readonly config: ServerConfig;
  readonly events = new Emitter<RuntimeEvents>();
  readonly pending: PendingRequests;
  readonly gate: RequestGate;
  transport: Transport | undefined;
  state: ConnectionState | null = null;
  session: SessionInfo | undefined;
  lastError: string | undefined;
  /** The last failure of a connection attempt, typed (the machine keeps only its text). */
  lastFailure: Error | undefined;
  /** Resolves at the first outcome of the first attempt: serving, or down, failed, closed. */
  readonly firstOutcome: Promise<void>;
  private settleFirstOutcome!: () => void;
  private readonly keepaliveProbe = new KeepaliveProbe();
  readonly authorization: Authorization;
  /** Set by the supervisor once the connection actor exists. */
  sendToConnection: (event: ConnectionEvent) => void = () => {};
  private readonly clientInfo: Implementation;
  private readonly capabilities: ClientCapabilities;
  private readonly serverRequests: ServerRequests;
  private readonly timers: Timers | undefined;
  /** A handshake succeeded once: from then on a stdio process that dies is restarted, not failed. */
  private connectedBefore = false;
  /** A transport being replaced or opened (see replaceTransport). */
  private opening: Promise<Transport> | undefined;

  constructor(options: RuntimeOptions) {
    this.config = options.config;
    this.name = options.config.name;
    this.clientInfo = options.clientInfo;
    this.capabilities = capabilitiesFor(options.handlers ?? NO_HANDLERS, options.elicitation);
    this.serverRequests = new ServerRequests(this.name, options.handlers ?? NO_HANDLERS, options.elicitation ?? NO_ELICITATION_OPTIONS, (response) => {
      this.transport?.send(response).catch((error: unknown) => this.events.emit('warning', error as Error));
    });
    this.timers = options.timers;
    this.authorization = new Authorization(options.config, this.name);
    this.gate = new RequestGate(options.config.maxQueuedRequests);
    this.firstOutcome = new Promise((resolve) => {
      this.settleFirstOutcome = resolve;
    });
    this.pending = new PendingRequests({
      server: this.name,
      cancel: (request, reason) => this.sendCancellation(request, reason),
    });
  }

  get transportKind(): TransportKind | undefined {
    return this.transport?.kind;
  }

  // ---- requests (the hot path: one Map entry and a direct transport call while open)

  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown> {
    const { request, promise } = this.pending.create(method, params, {
      timeoutMs: options?.timeoutMs ?? this.config.requestTimeoutMs,
      signal: options?.signal,
      onProgress: options?.onprogress,
      resetTimeoutOnProgress: options?.resetTimeoutOnProgress,
      maxTotalTimeoutMs: options?.maxTotalTimeoutMs,
    });
    if (!this.pending.isPending(request)) return promise;
    const phase = this.gate.phase;
    if (phase === 'open') this.dispatch(request, false);
    else if (phase === 'closed') this.pending.fail(request, this.closedError());
    else if (!this.gate.hold(request)) this.pending.fail(request, new QueueFullError(this.config.maxQueuedRequests, { server: this.name }));
    return promise;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.gate.phase !== 'open' || !this.transport) throw this.gate.phase === 'closed' ? this.closedError() : new ConnectionClosedError(`cannot send '${method}': the connection is ${this.state ?? 'starting'}`, { server: this.name, retryable: true });
    const message: JsonRpcNotification = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    await this.transport.send(message);
  }

  private dispatch(request: PendingRequest, handshake: boolean): void {
    const transport = this.transport;
    if (!transport) {
      this.pending.fail(request, this.closedError());
      return;
    }
    request.sent = true;
    const message: JsonRpcRequest = { jsonrpc: '2.0', id: request.id, method: request.method, params: request.params };
    transport.send(message, { signal: request.signal, handshake, timeoutMs: request.timeoutMs }).catch((error: unknown) => this.onSendFailure(request, error));
  }

  private onSendFailure(request: PendingRequest, error: unknown): void {
    if (!this.pending.isPending(request)) return;
    if (this.authorization.isFixable(error) && request.method !== 'initialize') {
      this.onRefused(request, error);
      return;
    }
    if (error instanceof SessionExpiredError) {
      const current = this.session?.sessionGeneration;
      if (error.sessionGeneration === current) {
        this.gate.park(request);
        this.sendToConnection({ type: 'SESSION_EXPIRED', generation: error.sessionGeneration });
        return;
      }
      // A late 404 from an older session: this session is fine, send the request again.
      this.resendOrPark(request);
      return;
    }
    if (isAbortError(error)) return; // the abort listener settles it
    this.pending.fail(request, error instanceof Error ? error : new Error(String(error)));
  }

  /** 401/403 on a request: park it and authorize once, unless newer credentials already exist. */
  private onRefused(request: PendingRequest, error: AuthorizationRequiredError): void {
    if (this.authorization.isOutdated(error)) {
      // Another refusal already brought new credentials: just send it again.
      this.resendOrPark(request);
      return;
    }
    this.gate.park(request);
    this.requestAuthorization(error);
  }

  /** One authorization for this refusal: the machine's `authorizing` state runs it. */
  private requestAuthorization(error: AuthorizationRequiredError): void {
    this.authorization.remember(error);
    this.sendToConnection({ type: 'AUTHORIZATION_REQUIRED', error: error.message });
  }

  /** Sends a request again (with a new id) while serving; otherwise it waits for the next release. */
  private resendOrPark(request: PendingRequest): void {
    if (this.gate.phase === 'open') {
      this.pending.renumber(request);
      this.dispatch(request, false);
    } else {
      this.gate.park(request);
    }
  }

  private sendCancellation(request: PendingRequest, reason: string): void {
    if (this.gate.phase !== 'open' || !this.transport) return;
    this.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason } }).catch(() => {});
  }

  // ---- TransportSink: what the transports report (incoming messages, stream trouble, death)
  onMessage(message: JsonRpcMessage): void {
    if (!('method' in message)) {
      if ('result' in message) this.authorization.succeeded();
      this.pending.settleResponse(message);
      return;
    }
    if (isRequest(message)) {
      this.serverRequests.handle(message);
      return;
    }
    dispatchNotification(message, this.events, this.serverRequests, this.pending);
  }

  isAwaiting(id: string | number): boolean {
    return this.pending.has(id);
  }

  onStreamError(error: Error): void {
    this.events.emit('warning', error);
  }

  /** The transport died: what was on the wire fails (retryable), the connection reconnects. */
  onClosed(error: Error): void {
    const fatal = (error as { fatal?: unknown }).fatal === true; // e.g. a stdio server that died before its first handshake
    this.pending.failSent(new ConnectionClosedError(`the connection was lost: ${error.message}`, { server: this.name, retryable: !fatal, fatal, cause: error }));
    this.sendToConnection({ type: 'CONNECTION_LOST', error: error.message, fatal });
  }

  // ---- effects invoked by the connection machine

  async connectTransport(kind: ConfiguredTransport): Promise<{ transport: TransportKind }> {
    return this.recordFailure(this.openTransport(kind));
  }

  /** The sse-fallback probe: replaces the refused Streamable HTTP transport with a legacy one. */
  async openLegacyTransport(): Promise<void> {
    const previous = this.transport;
    this.transport = undefined;
    await previous?.close().catch(() => {});
    try {
      const transport = createTransport(this.config, { sink: this, auth: this.authorization.provider, timers: this.timers }, 'sse');
      await transport.open();
      this.transport = transport;
    } catch (error) {
      const first = this.lastFailure;
      this.lastFailure = new FallbackFailedError(first, error, { server: this.name });
      throw error;
    }
  }

  /** One keepalive probe; skipped while requests are in flight (they prove liveness themselves). */
  async probe(timeoutMs: number): Promise<ProbeOutput> {
    if (this.pending.size - this.gate.waiting > 0) return { skipped: true };
    return this.keepaliveProbe.run((method) => this.request(method, undefined, { timeoutMs }), this.session?.capabilities);
  }

  /** Last keepalive round trip and misses in a row, for status(). */
  get keepalive(): { lastRttMs: number | undefined; missed: number } {
    return this.keepaliveProbe.status;
  }

  async initialize(): Promise<SessionInfo> {
    return this.recordFailure(this.handshake());
  }

  /** The `authorizing` state's effect. */
  authorize(signal: AbortSignal): Promise<void> {
    return this.recordFailure(this.authorization.authorize(signal));
  }

  private async recordFailure<T>(attempt: Promise<T>): Promise<T> {
    try {
      return await attempt;
    } catch (error) {
      this.authorization.remember(error);
      this.lastFailure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  private async openTransport(kind: ConfiguredTransport): Promise<{ transport: TransportKind }> {
    const wanted = kind === 'auto' ? 'http' : kind;
    // A stdio process is the session: a reconnect (keepalive misses, a failed handshake) needs a new one.
    if (!this.transport?.isOpen || this.transport.kind !== wanted || wanted === 'stdio') {
      const opening = this.replaceTransport(wanted);
      this.opening = opening;
      try {
        this.transport = await opening;
      } finally {
        if (this.opening === opening) this.opening = undefined;
      }
    }
    return { transport: this.transport.kind };
  }

  /** Closes the dead transport and opens a new one; closeSession waits for this, so a close never leaves one running (a stdio child in particular). */
  private async replaceTransport(kind: TransportKind): Promise<Transport> {
    const previous = this.transport;
    this.transport = undefined;
    await previous?.close().catch(() => {});
    await this.authorization.ready(); // stored credentials go out with the first request
    const transport = createTransport(this.config, { sink: this, auth: this.authorization.provider, timers: this.timers, hasConnectedBefore: () => this.connectedBefore }, kind);
    await transport.open();
    if (this.state === 'closing' || this.state === 'closed') {
      await transport.close().catch(() => {});
      throw new ConnectionClosedError('the connection was closed while opening', { server: this.name });
    }
    return transport;
  }

  private async handshake(): Promise<SessionInfo> {
    const session = await handshake({
      server: this.name,
      transport: this.requireTransport(),
      capabilities: this.capabilities,
      clientInfo: this.clientInfo,
      initialize: (params) => {
        // initialize MUST NOT be cancelled
        const { request, promise } = this.pending.create('initialize', params, { timeoutMs: this.config.requestTimeoutMs, uncancellable: true });
        this.dispatch(request, true);
        return promise;
      },
    });
    this.connectedBefore = true;
    return session;
  }

  async openListener(lastEventId: string | undefined) {
    try {
      return await this.requireTransport().openListener(lastEventId);
    } catch (error) {
      // A refused GET stream needs the same authorization as a refused request.
      if (this.authorization.isFixable(error) && !this.authorization.isOutdated(error)) this.requestAuthorization(error);
      throw error;
    }
  }

  async closeSession(): Promise<void> {
    this.serverRequests.abortAll('the connection was closed');
    this.pending.failAll(new ConnectionClosedError('the connection was closed', { server: this.name }));
    await this.opening?.catch(() => {});
    const transport = this.transport;
    this.transport = undefined;
    if (!transport) return;
    await transport.terminateSession();
    await transport.close();
  }

  // ---- lifecycle, observed from the connection actor's snapshots

  onSnapshot(value: unknown, context: { session?: SessionInfo | undefined; lastError?: string | undefined }, event: AnyEventObject): void {
    const state = topLevelState(value) as ConnectionState;
    const serving = typeof value === 'object' && value !== null && (value as Record<string, unknown>).ready === 'serving';
    this.session = context.session;
    this.lastError = context.lastError;
    const from = this.state;
    if (state !== from) {
      this.state = state;
      this.events.emit('transition', {
        server: this.name,
        from,
        to: state,
        cause: describeCause(event, value),
        error: eventError(event),
        at: Date.now(),
      });
      // Parked requests were never processed, but what would let them be sent again has failed.
      const parkedFailure = state === 'reconnecting' ? this.parkedFailure(from) : undefined;
      if (parkedFailure) for (const request of this.gate.drainParked()) this.pending.fail(request, parkedFailure);
    }
    this.setPhase(serving ? 'open' : state === 'failed' || state === 'closing' || state === 'closed' ? 'closed' : 'holding');
    if (serving || state === 'reconnecting' || state === 'failed' || state === 'closed') this.settleFirstOutcome();
  }

  /** Why parked requests fail when `from` gave up: a failed re-initialize or a failed authorization. */
  private parkedFailure(from: ConnectionState | null): Error | undefined {
    if (from === 'reinitializing') return new SessionExpiredError(`the session expired and re-initializing failed: ${this.lastError ?? 'unknown error'}`, -1, { server: this.name });
    if (from === 'authorizing') return this.lastFailure ?? new AuthorizationError(this.lastError ?? 'authorization failed', { server: this.name });
    return undefined;
  }

  /** The connection actor threw (a bug): the server is failed, nothing waits forever. */
  onCrash(error: unknown): void {
    const from = this.state;
    this.lastError = `the connection actor crashed: ${describeError(error)}`;
    this.state = 'failed';
    this.events.emit('transition', { server: this.name, from, to: 'failed', cause: 'crashed', error: this.lastError, at: Date.now() });
    this.setPhase('closed');
    this.settleFirstOutcome();
    void this.closeSession().catch(() => {});
  }

  private setPhase(phase: GatePhase): void {
    if (this.gate.phase === phase) return;
    this.gate.phase = phase;
    if (phase === 'open') {
      for (const request of this.gate.drain()) {
        if (!this.pending.isPending(request)) continue;
        this.pending.renumber(request);
        this.dispatch(request, false);
      }
    } else if (phase === 'closed') {
      const error = this.closedError();
      for (const request of this.gate.drain()) this.pending.fail(request, error);
    }
  }

  private closedError(): ConnectionClosedError {
    if (this.state === 'failed') {
      return new ConnectionClosedError(`the server has failed${this.lastError ? `: ${this.lastError}` : ''}`, { server: this.name });
    }
    return new ConnectionClosedError('the connection is closed', { server: this.name });
  }

  private requireTransport(): Transport {
    if (!this.transport) throw new ConnectionClosedError('no transport: the connection is not open', { server: this.name, retryable: true });
    return this.transport;
  }
}

/**
 * What the connection machine asks of one server's runtime besides requests: the effects of its
 * states (probes, the handshake, authorization, the listener, closing). The read-only view of the
 * connection actor is in connection-view.ts; the server runtime extends this.
 */
import type { DiscoverVerdict, ProbeVerdict, SessionInfo } from '../../machines/connection.machine.js';
import type { ProbeOutput } from '../../machines/keepalive.machine.js';
import type { ServerConfig } from '../config/server-config.js';
import { ConnectionClosedError, McpError, ProtocolError, type AuthorizationRequiredError } from '../core/errors.js';
import { startOperation } from '../observe/telemetry/server-telemetry.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/jsonrpc.js';
import { ModernEnvelope, pinOf, type VersionPin } from '../protocol/era.js';
import type { ClientCapabilities, Implementation } from '../protocol/messages.js';
import { PendingRequests, type ExchangeSignal, type PendingRequest } from '../protocol/pending.js';
import type { TransportFactory } from '../transports/factory/create-transport.js';
import type { ListenerOpenResult, Timers, Transport } from '../transports/transport.js';
import { Authorization } from './authorization.js';
import { ConnectionView } from './connection-view.js';
import type { RequestOptions } from './events.js';
import { probeVerdict } from './evidence.js';
import { takesToolTasks, withTasksExtension } from '../tasks/context.js';
import { discover } from './discover.js';
import { handshake } from './handshake.js';
import { KeepaliveProbe } from './keepalive-probe.js';
import type { ListenControl, ModernListens } from './listen.js';
import { ModernListening } from './modern-listening.js';
import { RequestGate } from './request-gate.js';
import { SessionState, type RestoreReport } from './session-state.js';
import { ToolOutputSchemas } from '../protocol/tool-output.js';
import {
  capabilitiesFor,
  NO_ELICITATION_OPTIONS,
  NO_HANDLERS,
  ServerRequests,
  type ClientHandlers,
  type ElicitationOptions,
  type HandlerContext,
  type SamplingOptions,
} from './server-requests.js';
import { DEFAULT_MAX_INPUT_ROUNDS } from './multi-round-trip.js';
import { mergeCapabilities, withoutRootsListChanged } from './client-capabilities.js';

export interface RuntimeOptions {
  config: ServerConfig;
  clientInfo: Implementation;
  handlers?: ClientHandlers | undefined;
  elicitation?: ElicitationOptions | undefined;
  sampling?: SamplingOptions | undefined;
  /** Declared on top of what the handlers declare (validated by client-capabilities.ts). */
  capabilities?: ClientCapabilities | undefined;
  /** Retries of one multi round-trip request before it fails (default 10). */
  maxInputRounds?: number | undefined;
  timers?: Timers | undefined;
  /** Internal test hook (see SupervisorOptions.createTransport). */
  createTransport?: TransportFactory | undefined;
}

export type { ConnectionRef } from './connection-view.js';

export abstract class ConnectionEffects extends ConnectionView {
  readonly pending: PendingRequests;
  readonly gate: RequestGate;
  protected readonly serverRequests: ServerRequests;
  readonly maxInputRounds: number;
  /** Subscriptions, logging level and roots (created by the first of them: an idle server holds none). */
  private established: SessionState | undefined;
  /** The tools' output schemas, from the first tools list on (never with `validateToolOutput: false`). */
  private toolOutput: ToolOutputSchemas | undefined;
  private readonly keepaliveProbe = new KeepaliveProbe();
  private readonly clientInfo: Implementation;
  private readonly capabilities: ClientCapabilities;
  /** What `protocolVersion` in the config asks for. */
  private readonly pin: VersionPin;
  /** The modern wire in use: every request's `_meta`. Undefined in the legacy era. */
  protected envelope: ModernEnvelope | undefined;
  /**
   * The 2025-era session's server runs `tools/call` as tasks (2025-11-25 `tasks.requests.tools.call`):
   * read by callTool on every call, so kept here and not read from the machine's snapshot.
   */
  runsToolTasks = false;
  /** Modern era: the listen and the set it asks for (created by the first listen, task watch or change). */
  private listening: ModernListening | undefined;
  /** Requests sent past the gate by the machine's own effects (discover, probes): their failures are the machine's business. */
  protected readonly pastGate = new WeakSet<PendingRequest>();

  protected constructor(options: RuntimeOptions) {
    super(
      options.config.name,
      options.config,
      new Authorization(options.config, options.config.name),
      options.timers,
      options.createTransport,
    );
    this.clientInfo = options.clientInfo;
    this.pin = pinOf(options.config.protocolVersion);
    const declared = capabilitiesFor(options.handlers ?? NO_HANDLERS, options.elicitation, options.sampling);
    this.capabilities = options.capabilities ? mergeCapabilities(declared, options.capabilities) : declared;
    this.maxInputRounds = options.maxInputRounds ?? DEFAULT_MAX_INPUT_ROUNDS;
    this.serverRequests = new ServerRequests(
      this.name,
      options.handlers ?? NO_HANDLERS,
      options.elicitation ?? NO_ELICITATION_OPTIONS,
      (response) => this.respond(response),
    );
    this.gate = new RequestGate(options.config.maxQueuedRequests);
    this.pending = new PendingRequests({
      server: this.name,
      cancel: (request, reason) => this.sendCancellation(request, reason),
      timedOut: (request) => this.onTimedOut(request),
    });
  }

  abstract request(
    method: string,
    params: Record<string, unknown> | undefined,
    options?: RequestOptions,
  ): Promise<unknown>;
  protected abstract dispatch(request: PendingRequest, handshake: boolean): void;
  protected abstract requestAuthorization(error: AuthorizationRequiredError): void;
  protected abstract sendCancellation(request: PendingRequest, reason: string): void;
  protected abstract onTimedOut(request: PendingRequest): void;

  /** What the client established on its sessions, re-established on every new one (session-state.ts). */
  get sessionState(): SessionState {
    return (this.established ??= new SessionState());
  }

  /** The session state, if anything was ever established (reading it creates nothing). */
  protected get savedSessionState(): SessionState | undefined {
    return this.established;
  }

  get outputSchemas(): ToolOutputSchemas | undefined {
    return this.toolOutput;
  }

  /** One page of a tools list: the output schemas to check calls against (tool-output.ts). */
  protected learnOutputSchemas(result: unknown, firstPage: boolean): void {
    if (this.config.validateToolOutput) (this.toolOutput ??= new ToolOutputSchemas()).learn(result, firstPage);
  }

  /** Answers a server's request on the current transport. */
  protected respond(response: JsonRpcMessage): void {
    this.transport?.send(response).catch((error: unknown) => this.events.emit('warning', error as Error));
  }

  /** An embedded request of a multi round-trip request: roots set with `setRoots` answer `roots/list`, else the handlers. */
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>> {
    const roots = method === 'roots/list' ? this.established?.roots : undefined;
    if (roots) return Promise.resolve({ roots });
    return this.serverRequests.answer(method, params, context);
  }

  // ---- effects invoked by the connection machine

  /** One keepalive probe; skipped while requests are in flight (they prove liveness themselves). */
  async probe(timeoutMs: number): Promise<ProbeOutput> {
    if (this.pending.size - this.gate.waiting > 0) return { skipped: true };
    // The modern era has no `ping`; `server/discover` is the one request every modern server serves.
    const probe = this.envelope
      ? this.keepaliveProbe.run(() => this.request('server/discover', undefined, { timeoutMs }))
      : this.keepaliveProbe.run(
          (method) => this.request(method, undefined, { timeoutMs }),
          this.session()?.capabilities,
        );
    return this.telemetry ? this.telemetry.onProbe(probe) : probe;
  }

  /** `probing`: one `ping` on the session, past the gate; its answer (or failure) is the verdict. */
  async probeSession(): Promise<ProbeVerdict> {
    const transport = this.transport;
    if (!transport) return { verdict: 'unreachable', error: 'no transport' };
    const keepalive = this.config.keepalive;
    const timeoutMs = keepalive === false ? Math.min(this.config.requestTimeoutMs, 10_000) : keepalive.timeoutMs;
    try {
      // Modern: no `ping`; one `server/discover` (which also refreshes nothing: the session stays).
      if (this.envelope) await this.sendPastGate('server/discover', this.envelope.wrap(undefined), timeoutMs);
      else await this.sendPastGate('ping', undefined, timeoutMs, false);
      return { verdict: 'alive' };
    } catch (error) {
      if (error instanceof McpError) return { verdict: 'alive' }; // any answer proves the session alive
      if (this.authorization.isFixable(error)) this.authorization.remember(error);
      return probeVerdict(error);
    }
  }

  initialize(): Promise<SessionInfo> {
    return this.recordFailure(this.handshake());
  }

  /** `discovering`: the era probe, and for a modern server the discovery that stands for a session. */
  discoverServer(): Promise<DiscoverVerdict> {
    return this.recordFailure(this.discoverEra());
  }

  private async discoverEra(): Promise<DiscoverVerdict> {
    const transport = this.transport;
    if (!transport) throw new ConnectionClosedError('no transport: the connection is not open', { server: this.name });
    this.envelope = undefined;
    this.runsToolTasks = false;
    const timeoutMs = Math.min(this.config.requestTimeoutMs, 10_000);
    const verdict = await discover({
      server: this.name,
      transport,
      pin: this.pin,
      send: (version) =>
        this.sendPastGate(
          'server/discover',
          new ModernEnvelope(version, this.modernCapabilities(), this.clientInfo).wrap(undefined),
          timeoutMs,
        ),
    });
    if (verdict.era === 'modern') {
      this.envelope = new ModernEnvelope(
        verdict.session.protocolVersion,
        this.modernCapabilities(),
        this.clientInfo,
        this.established?.loggingLevel,
      );
      if (this.connectedBefore) this.toolOutput?.invalidate(); // a restarted server may declare other tools
      this.connectedBefore = true;
      // No session-state restore here: the modern era has no session to carry state and no
      // `logging/setLevel`; the resource subscriptions travel in the listener's
      // `subscriptions/listen` (listen.ts), and the roots capability in every request's `_meta`.
    }
    return verdict;
  }

  /** One request straight to the transport, whatever the gate says; its failure settles it (no evidence is read). */
  private sendPastGate(
    method: string,
    params: Record<string, unknown> | undefined,
    timeoutMs: number,
    /** The era probe is not cancelled (a legacy server may not know the method); a ping may be. */
    probe = true,
  ): Promise<unknown> {
    const transport = this.transport;
    if (!transport) return Promise.reject(new ConnectionClosedError('no transport', { server: this.name }));
    const { request, promise } = this.pending.create(method, params, { timeoutMs, uncancellable: probe });
    this.pastGate.add(request);
    request.sent = true;
    const message: JsonRpcRequest =
      params === undefined
        ? { jsonrpc: '2.0', id: request.id, method }
        : { jsonrpc: '2.0', id: request.id, method, params };
    transport
      .send(message, { timeoutMs, signal: probe ? request : undefined })
      .catch((error: unknown) => this.pending.fail(request, error instanceof Error ? error : new Error(String(error))));
    return promise;
  }

  /** The `authorizing` state's effect. */
  authorize(signal: AbortSignal): Promise<void> {
    return this.recordFailure(this.authorization.authorize(signal));
  }

  private async handshake(): Promise<SessionInfo> {
    const transport = this.transport;
    if (!transport) throw new ConnectionClosedError('no transport: the connection is not open', { server: this.name });
    this.envelope = undefined;
    const session = await handshake({
      server: this.name,
      transport,
      protocolVersion: this.pin.era === 'legacy' ? this.pin.version : undefined,
      capabilities: this.advertisedCapabilities(),
      clientInfo: this.clientInfo,
      initialize: (params) => {
        const operation = startOperation(this, 'initialize', params);
        // initialize MUST NOT be cancelled
        const { request, promise } = this.pending.create('initialize', operation?.params ?? params, {
          timeoutMs: this.config.requestTimeoutMs,
          uncancellable: true,
        });
        if (operation) this.telemetry?.track(request, promise, operation);
        this.dispatch(request, true);
        return promise;
      },
    });
    const replacing = this.connectedBefore;
    this.connectedBefore = true;
    this.runsToolTasks = takesToolTasks(session.capabilities);
    if (replacing) this.toolOutput?.invalidate(); // a restarted server may declare other tools
    await this.restoreSessionState(transport, session.capabilities, replacing);
    return session;
  }

  /** A `roots` handler was given: every session advertises the roots capability. */
  advertisesRoots(): boolean {
    return this.capabilities.roots !== undefined;
  }

  /** Roots set before the first handshake are advertised even without a `roots` handler. */
  private advertisedCapabilities(): ClientCapabilities {
    if (this.capabilities.roots || this.established?.roots === undefined) return this.capabilities;
    return { ...this.capabilities, roots: { listChanged: true } };
  }

  /** Modern requests declare the tasks extension (callTool handles a task as an answer), and no `roots.listChanged`. */
  private modernCapabilities(): ClientCapabilities {
    return withTasksExtension(withoutRootsListChanged(this.advertisedCapabilities()));
  }

  /** The new session gets what the old one had (session-state.ts), before held requests are released. */
  private async restoreSessionState(
    transport: Transport,
    capabilities: Record<string, unknown>,
    replacing: boolean,
  ): Promise<void> {
    const state = this.established;
    if (!state) return;
    const timeoutMs = Math.min(this.config.requestTimeoutMs, 10_000);
    const report = await state.restore(
      {
        capabilities,
        request: (method, params) => this.sendPastGate(method, params, timeoutMs, false),
        notify: (method) => transport.send({ jsonrpc: '2.0', method }),
      },
      replacing,
    );
    if (!report) return;
    for (const { what, error } of report.failed) {
      const text = this.redact(`could not restore the ${what} on the new session: ${error}`);
      this.events.emit('warning', new ProtocolError(text, { server: this.name }));
    }
    this.events.emit('sessionRestored', report satisfies RestoreReport);
  }

  async openListener(lastEventId: string | undefined): Promise<ListenerOpenResult> {
    const transport = this.transport;
    if (!transport) throw new ConnectionClosedError('no transport: the connection is not open', { server: this.name });
    const envelope = this.envelope;
    try {
      if (!envelope) return await transport.openListener(lastEventId);
      // The modern era has no GET stream: `subscriptions/listen` stands for it (modern-listening.ts).
      return await this.modernListening().open(transport, envelope, Math.min(this.config.requestTimeoutMs, 10_000));
    } catch (error) {
      // A refused listening stream needs the same authorization as a refused request.
      if (this.authorization.isFixable(error) && !this.authorization.isOutdated(error))
        this.requestAuthorization(error);
      throw error;
    }
  }

  private modernListening(): ModernListening {
    return (this.listening ??= new ModernListening(this, () => this.established?.subscribedUris() ?? []));
  }

  /** Modern era: the `subscriptions/listen` requests, if a listen was ever opened or changed. */
  protected get modernListens(): ModernListens | undefined {
    return this.listening?.requests;
  }

  /** Modern era: a task being polled joins the listen's set, on a server that offers task notifications. */
  watchTask(taskId: string): () => void {
    return this.modernListening().watchTask(taskId);
  }

  /**
   * Modern era (the server is, or was last, spoken to in it): what resource subscriptions
   * change, the listen's set (resource-subscriptions.ts). Undefined in the legacy era.
   */
  listenControl(): ListenControl | undefined {
    return this.modernListening().control();
  }

  /**
   * TransportSink: a resume GET was refused (401/403). The same one authorization as for a refused
   * request; true once new credentials are in place, so the stream resumes with them.
   */
  renewCredentials(refusal: AuthorizationRequiredError, signal: ExchangeSignal | undefined): Promise<boolean> {
    if (!this.authorization.isFixable(refusal)) return Promise.resolve(false);
    if (this.authorization.isOutdated(refusal)) return Promise.resolve(true);
    const renewed = this.authorization.nextRenewal(signal);
    this.requestAuthorization(refusal);
    return renewed;
  }

  async closeSession(): Promise<void> {
    this.serverRequests.abortAll('the connection was closed');
    this.pending.failAll(new ConnectionClosedError('the connection was closed', { server: this.name }));
    await this.closeTransport();
  }
}

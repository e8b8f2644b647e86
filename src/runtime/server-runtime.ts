/**
 * One server's runtime: the host the connection machine drives (machines/connection-host.ts)
 * and the sink its transports report to, held as such by the supervisor alone; the handle and
 * what it builds hold its other face, the port (server-port.ts). It is built from parts that
 * share one context (server-context.ts); follow one request or one session expiry from here into its room:
 *
 * - `request()` goes down the request path (requests/request-path.ts): straight to the
 *   transport while the gate is open (the hot path), else it waits in the gate;
 * - a failed send is read as evidence by recovery (recovery/recovery.ts), which parks the
 *   request, tells the machine, and runs the machine's actions on what waits;
 * - the transport's own life is in transport/, probes in probes/, the handshake and discovery
 *   in session/, the listening stream in listening/, answering the server in server-input/.
 */
import type { ConnectionHost, ListenerOpening } from '../../machines/connection-host.js';
import type {
  ConfiguredTransport,
  DiscoverVerdict,
  FactOf,
  ProbeVerdict,
  SessionInfo,
  TransportOpened,
} from '../../machines/connection.machine.js';
import type { ProbeOutput } from '../../machines/keepalive.machine.js';
import { ConnectionClosedError, type AuthorizationRequiredError } from '../core/errors.js';
import { isRequest, type JsonRpcMessage, type JsonRpcNotification } from '../protocol/jsonrpc.js';
import { UNSUPPORTED_PROTOCOL_VERSION } from '../protocol/era.js';
import { PendingRequests, type ExchangeSignal } from '../protocol/pending.js';
import type { TransportSink } from '../transports/transport.js';
import { ConnectionView } from './connection-view.js';
import { factsOfMove, tellFact } from './lifecycle-facts.js';
import type { RequestOptions } from './context/events.js';
import { dispatchNotification } from './inbound/notifications.js';
import type { ListenControl } from './listening/listen.js';
import { ModernListening } from './listening/modern-listening.js';
import { openListener } from './listening/open-listener.js';
import { Probes } from './probes/probes.js';
import { OriginKeepaliveShare } from './keepalive/origin-keepalive.js';
import { OriginMembership } from './recovery/origin-membership.js';
import type { Recovery } from './recovery/recovery.js';
import { RequestPath } from './requests/request-path.js';
import type { RuntimeOptions } from './runtime-options.js';
import { ServerContext } from './context/server-context.js';
import type { ServerPort } from './server-port.js';
import { ServerInput } from './server-input/server-input.js';
import {
  capabilitiesFor,
  NO_ELICITATION_OPTIONS,
  NO_HANDLERS,
  type ClientHandlers,
  type ElicitationOptions,
  type HandlerContext,
} from './server-input/server-requests.js';
import { mergeCapabilities } from './session/client-capabilities.js';
import { SessionOpening } from './session/session-opening.js';
import { TransportSlot } from './transport/transport-slot.js';

/** The runtime is its transports' sink: a sink object of four closures would cost ~0.3 KB per server. */
export class ServerRuntime implements ConnectionHost, TransportSink, ServerPort {
  /** What the parts share: identity, pending requests and gate, the transport, the session's facts. */
  readonly context: ServerContext;
  private readonly slot: TransportSlot;
  readonly view: ConnectionView;
  readonly requests: RequestPath;
  private readonly recovery: Recovery;
  readonly probes: Probes;
  private readonly opening: SessionOpening;
  /** Its origin's reconnect turns (recovery/origin-turns.ts), and its part in the origin's one keepalive. */
  readonly origin: OriginMembership;
  readonly originKeepalive: OriginKeepaliveShare | undefined;
  /** Answering the server (built by its first request, or the first multi round-trip answer). */
  private input: ServerInput | undefined = undefined;
  /** Modern era: the listen and the set it asks for (created by the first listen, task watch or change). */
  private listening: ModernListening | undefined = undefined;
  private readonly handlers: ClientHandlers;
  private readonly elicitation: ElicitationOptions;

  constructor(options: RuntimeOptions) {
    const config = options.config;
    const pending = new PendingRequests({
      server: config.name,
      cancel: (request, reason) => this.requests.sendCancellation(request, reason),
      timedOut: (request) => this.recovery.onTimedOut(request),
      whyWaiting: () => this.whyWaiting(),
      rateLimited: (request, error) => this.requests.onRateLimited(request, error),
    });
    const context = (this.context = new ServerContext(config, options.timers, this, pending, options.store));
    this.handlers = options.handlers ?? NO_HANDLERS;
    this.elicitation = options.elicitation ?? NO_ELICITATION_OPTIONS;
    const declared = capabilitiesFor(this.handlers, options.elicitation, options.sampling);
    const capabilities = options.capabilities ? mergeCapabilities(declared, options.capabilities) : declared;
    this.slot = new TransportSlot(context, this, options.createTransport);
    this.view = new ConnectionView(context);
    this.origin = new OriginMembership(context);
    this.requests = new RequestPath(context, this, this.origin, options.maxInputRounds);
    this.recovery = this.requests.recovery;
    this.probes = new Probes(context, this.requests, this.origin.liveness);
    this.originKeepalive = OriginKeepaliveShare.of(this);
    this.opening = new SessionOpening(context, this.requests, this.probes, options.clientInfo, capabilities);
  }

  /** The last failure of a connection attempt, typed (the machine keeps only its text). */
  get lastFailure(): Error | undefined {
    return this.slot.lastFailure;
  }

  /** A request that never left timed out: what held it (the connection not serving, or a limit). */
  private whyWaiting(): string | undefined {
    const context = this.context;
    if (context.gate.phase === 'open') {
      const until = this.requests.limits.until;
      if (until !== undefined)
        return `held: the server asked to wait (HTTP ${this.requests.limits.lastBusy?.status ?? 429})`;
      return context.gate.limited > 0 ? 'held by the request limits (maxInFlight, rateLimit)' : undefined;
    }
    const lastError = this.view.lastError();
    return `held: the server is ${this.view.state()}${lastError ? `: ${lastError}` : ''}`;
  }
  /** Last keepalive round trip and misses in a row: the keepalive child's own, or its origin keepalive's. */
  keepalive(): { lastRttMs: number | undefined; missed: number } {
    return this.originKeepalive?.figures() ?? this.view.keepalive();
  }
  onTransition(change: FactOf<'state changed'>): void {
    this.origin.onMove(factsOfMove(this));
    this.view.onTransition(change);
  }

  // ---- requests (the hot path: one Map entry and a direct transport call while open)

  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown> {
    // Watched calls (observe/calls.ts) are the user's: keepalive probes go straight down the request path.
    const calls = this.context.calls;
    if (calls) return calls.request(this.requests, method, params, options);
    return this.requests.request(method, params, options);
  }

  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.requests.notify(method, params);
  }

  /** An embedded request of a multi round-trip request: roots set with `setRoots` answer `roots/list`, else the handlers. */
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>> {
    return this.serverInput().answerInput(method, params, context);
  }

  advertisesRoots(): boolean {
    return this.opening.advertisesRoots();
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

  private serverInput(): ServerInput {
    return (this.input ??= new ServerInput(this.context, this.handlers, this.elicitation));
  }

  private modernListening(): ModernListening {
    return (this.listening ??= new ModernListening(
      this.context,
      () => this.context.savedSessionState?.subscribedUris() ?? [],
    ));
  }

  // ---- ConnectionHost: the machine's actors (see machines/connection-host.ts for when each runs)

  connectTransport(kind: ConfiguredTransport): Promise<TransportOpened> {
    return this.opening.withStoredEra(this.origin.attempt(() => this.slot.connectTransport(kind)));
  }
  discoverServer(): Promise<DiscoverVerdict> {
    return this.origin.noting(this.slot.recordFailure(this.opening.discover()));
  }
  initialize(): Promise<SessionInfo> {
    return this.origin.noting(this.slot.recordFailure(this.opening.initialize()));
  }
  probeSession(): Promise<ProbeVerdict> {
    return this.probes.probeSession();
  }
  authorize(signal: AbortSignal): Promise<void> {
    return this.slot.recordFailure(this.context.authorization.authorize(signal));
  }
  probe(timeoutMs: number): Promise<ProbeOutput> {
    return this.probes.probe(timeoutMs);
  }
  openListener(lastEventId: string | undefined): Promise<ListenerOpening> {
    return openListener(
      this.context,
      lastEventId,
      (build) => (build ? this.modernListening() : this.listening),
      (refusal) => this.recovery.requestAuthorization(refusal),
      this.requests.limits,
    );
  }
  openLegacyTransport(): Promise<void> {
    return this.slot.openLegacyTransport();
  }

  async closeSession(): Promise<void> {
    this.requests.limits.stop();
    this.input?.requests.abortAll('the connection was closed');
    this.context.pending.failAll(
      () => new ConnectionClosedError('the connection was closed', { server: this.context.name }),
    );
    await this.slot.closeTransport();
    if (this.context.stored) await this.context.stored.flush();
  }

  // ---- ConnectionHost: the machine's actions

  holdRequests(): void {
    this.recovery.holdRequests();
  }
  releaseRequests(): void {
    this.recovery.releaseRequests();
  }
  rejectWaitingRequests(reason: string): void {
    this.requests.limits.stop();
    this.recovery.rejectWaitingRequests(reason);
  }
  failParkedRequests(): void {
    this.recovery.failParkedRequests(this.slot.lastFailure, this.view.lastError());
  }
  settleDoubtfulRequests(lost: boolean): void {
    this.recovery.settleDoubtfulRequests(lost);
  }
  replaceTransport(): void {
    this.slot.replaceTransport();
  }
  scheduleRevival(delayMs: number): void {
    this.view.nextAttemptAt = Date.now() + delayMs;
  }

  /** An attempt is over (serving, or down): `start()`, `connect()` and `reconnect()` resolve. */
  settleAttempt(): void {
    this.view.settleAttempt();
  }

  /** The connection actor threw (a bug): the server is failed, nothing waits forever. */
  onCrash(error: unknown): void {
    const reason = this.view.onCrash(error);
    // The machine is gone and says nothing more: its runtime tells the move into `failed`.
    tellFact(this, { type: 'gave up', reason, fatal: true });
    tellFact(this, { type: 'state changed', to: 'failed', cause: 'crashed', error: reason });
    this.rejectWaitingRequests(reason);
    this.view.settleAttempt();
    void this.closeSession().catch(() => {});
  }

  // ---- TransportSink: what the transports report (incoming messages, stream trouble, death)

  onMessage(message: JsonRpcMessage): void {
    const context = this.context;
    // Modern era: the listen's acknowledgment and answer, and notifications of a listen no longer open.
    if (this.listening?.requests?.route(message)) return;
    if (!('method' in message)) {
      if ('error' in message && message.error.code === UNSUPPORTED_PROTOCOL_VERSION && context.facts?.envelope)
        if (this.recovery.onVersionRefused(message.id, message.error.data)) return;
      this.recovery.unanswered = 0;
      if ('result' in message) context.authorization.succeeded();
      context.pending.settleResponse(message);
      return;
    }
    if (isRequest(message)) return this.serverInput().serve(message);
    if (message.method === 'notifications/tools/list_changed') context.outputSchemas?.invalidate();
    if (context.telemetry) context.telemetry.receive(message, this);
    else this.deliver(message);
  }

  /** Public for the telemetry, which delivers a notification inside the trace it carries. */
  deliver(notification: JsonRpcNotification): void {
    const { events, pending } = this.context;
    dispatchNotification(notification, events, this.input?.requests, pending);
  }

  isAwaiting(id: string | number): boolean {
    return this.context.pending.has(id);
  }

  onStreamError(error: Error): void {
    this.context.events.emit('warning', error);
  }

  /** The transport died: what was on the wire has an unknown outcome; the connection reconnects. */
  onClosed(error: Error): void {
    this.listening?.requests?.closeAll();
    this.recovery.onConnectionLost(error);
  }

  /**
   * A resume GET was refused (401/403). The same one authorization as for a refused request;
   * true once new credentials are in place, so the stream resumes with them.
   */
  renewCredentials(refusal: AuthorizationRequiredError, signal: ExchangeSignal | undefined): Promise<boolean> {
    return this.recovery.renewCredentials(refusal, signal);
  }
}

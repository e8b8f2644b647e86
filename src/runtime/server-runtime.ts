/**
 * One server's runtime: the pending requests, the gate where they wait, and what the transports
 * report. Read one request or one session expiry top to bottom here:
 *
 * - `request()` sends straight to the transport while the gate is open (the hot path), else
 *   the request waits in the gate;
 * - `onSendFailure()` reads a failure as evidence and puts the request where it belongs, and the
 *   machine's actions release or end what waits (request-recovery.ts).
 *
 * The transport's own life is in transport-owner.ts; the handshake in handshake.ts.
 */
import { ConnectionClosedError, describeError, QueueFullError } from '../core/errors.js';
import { isRequest, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest } from '../protocol/jsonrpc.js';
import { UNSUPPORTED_PROTOCOL_VERSION } from '../protocol/era.js';
import type { CreateOptions, PendingRequest } from '../protocol/pending.js';
import { startOperation } from '../observe/telemetry/server-telemetry.js';
import { tellFact } from './lifecycle-facts.js';
import type { RuntimeOptions } from './connection-effects.js';
import type { RequestOptions } from './events.js';
import { dispatchNotification } from './notifications.js';
import { RequestRecovery } from './request-recovery.js';
import {
  completeRounds,
  isInputRequired,
  mayRequireInput,
  roundEvent,
  type InputRequiredResult,
} from './multi-round-trip.js';
import type { Operation } from '../observe/telemetry/tracing.js';
import { answerSetLevel } from './modern-logging.js';
import { ToolHeaders } from './tool-headers.js';

export type {
  ConnectionState,
  LogMessage,
  RequestOptions,
  ResourceUpdated,
  RuntimeEvents,
  TransitionEvent,
} from './events.js';
export type { RuntimeOptions } from './connection-effects.js';

/** The runtime is its transports' sink: a sink object of four closures would cost ~0.3 KB per server. */
export class ServerRuntime extends RequestRecovery {
  /** Resolves at the first outcome of the first attempt: serving, or down, failed, closed. */
  readonly firstOutcome: Promise<void>;
  private settleFirstOutcome!: () => void;
  /** Waiting for the outcome of the next attempt (`handle.reconnect()`). */
  private attemptWaiters: (() => void)[] | undefined;
  /** SEP-2243: the tools' `x-mcp-header` declarations (modern Streamable HTTP only). */
  readonly toolHeaders = new ToolHeaders();

  constructor(options: RuntimeOptions) {
    super(options);
    this.firstOutcome = new Promise((resolve) => {
      this.settleFirstOutcome = resolve;
    });
  }

  // ---- requests (the hot path: one Map entry and a direct transport call while open)

  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown> {
    if (method === 'tools/call' && this.mirrorsToolHeaders) {
      const refusal = this.toolHeaders.refusal(params, this.name);
      if (refusal) return Promise.reject(refusal);
    }
    const operation = startOperation(this, method, params); // undefined unless an OpenTelemetry SDK is registered
    const sent = operation?.params ?? params;
    const { request, promise: answered } = this.pending.create(method, sent, this.createOptions(options));
    // Modern era: an `InputRequiredResult` is answered through the handlers and sent again (multi-round-trip.ts).
    const promise = mayRequireInput(method)
      ? answered.then((result) =>
          isInputRequired(result) ? this.completeInputRounds(method, sent, options, result, operation) : result,
        )
      : answered;
    if (operation) this.telemetry?.track(request, promise, operation);
    this.enqueue(request);
    // What the server says of its tools decides which calls may be replayed (replay-policy.ts)
    // and how their structured output is checked (tool-output.ts).
    if (method === 'tools/list')
      promise.then((result) => this.learnTools(result, params?.cursor === undefined), ignore);
    return promise;
  }

  private createOptions(options: RequestOptions | undefined): CreateOptions {
    return {
      timeoutMs: options?.timeoutMs ?? this.config.requestTimeoutMs,
      signal: options?.signal,
      onProgress: options?.onprogress,
      resetTimeoutOnProgress: options?.resetTimeoutOnProgress,
      maxTotalTimeoutMs: options?.maxTotalTimeoutMs,
      retry: options?.retry,
    };
  }

  /** Straight to the transport while the gate is open (the hot path), else it waits in the gate. */
  private enqueue(request: PendingRequest): void {
    if (!this.pending.isPending(request)) return; // aborted before it was created
    const phase = this.gate.phase;
    if (phase === 'open') this.dispatch(request, false);
    else if (phase === 'closed') this.pending.fail(request, this.closedError());
    else if (this.gate.hold(request)) this.telemetry?.onHeld(request, this.state());
    else this.pending.fail(request, new QueueFullError(this.config.maxQueuedRequests, { server: this.name }));
  }

  private completeInputRounds(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestOptions | undefined,
    first: InputRequiredResult,
    operation: Operation | undefined,
  ): Promise<unknown> {
    return completeRounds(first, {
      server: this.name,
      method,
      params,
      maxRounds: this.maxInputRounds,
      signal: options?.signal,
      send: (retry) => {
        const { request, promise } = this.pending.create(method, retry, this.createOptions(options));
        this.enqueue(request);
        return promise;
      },
      answer: (inputMethod, inputParams, context) => this.answerInput(inputMethod, inputParams, context),
      onRound: operation?.span ? (round, result) => operation.span?.addEvent(...roundEvent(round, result)) : undefined,
    });
  }

  /** Modern Streamable HTTP: `x-mcp-header` parameters are mirrored, invalid tool definitions excluded. */
  get mirrorsToolHeaders(): boolean {
    return this.envelope !== undefined && this.transport?.kind === 'http';
  }

  private learnTools(result: unknown, firstPage: boolean): void {
    this.tools.learn(result);
    if (this.mirrorsToolHeaders) this.toolHeaders.learn(result, firstPage);
    this.learnOutputSchemas(result, firstPage);
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.gate.phase !== 'open' || !this.transport) {
      if (this.gate.phase === 'closed') throw this.closedError();
      throw new ConnectionClosedError(`cannot send '${method}': the connection is ${this.state()}`, {
        server: this.name,
        retryable: true,
      });
    }
    const operation = startOperation(this, method, params);
    if (operation) params = operation.params;
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    const sent = this.transport.send(message);
    operation?.settle(sent, method);
    await sent;
  }

  protected dispatch(request: PendingRequest, handshake: boolean): void {
    const transport = this.transport;
    if (!transport) {
      this.waitOrFail(request);
      return;
    }
    const envelope = this.envelope;
    // Modern era: no `logging/setLevel`; the level rides in every later request's `_meta`.
    if (envelope && request.method === 'logging/setLevel') return answerSetLevel(request, envelope, this);
    request.sent = true;
    this.telemetry?.onSend(request);
    // Modern era: the `_meta` envelope, built per send (a replay after a version change carries the new one).
    const params = envelope ? envelope.wrap(request.params) : request.params;
    const message: JsonRpcRequest = { jsonrpc: '2.0', id: request.id, method: request.method, params };
    const headers =
      envelope && transport.kind === 'http' ? this.toolHeaders.headersFor(request.method, request.params) : undefined;
    transport
      .send(message, { signal: request, handshake, timeoutMs: request.timeoutMs, headers })
      .catch((error: unknown) => this.onSendFailure(request, error));
  }

  protected sendCancellation(request: PendingRequest, reason: string): void {
    if (this.gate.phase !== 'open' || !this.transport) return;
    // Modern Streamable HTTP: closing the request's response stream (done when it failed) is the cancellation.
    if (this.envelope && this.transport.kind === 'http') return;
    this.transport
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason } })
      .catch(ignore);
  }

  // ---- TransportSink: what the transports report (incoming messages, stream trouble, death)

  onMessage(message: JsonRpcMessage): void {
    // Modern era: the listen's acknowledgment and answer, and notifications of a listen no longer open.
    if (this.modernListens?.route(message)) return;
    if (!('method' in message)) {
      if (this.envelope && 'error' in message && message.error.code === UNSUPPORTED_PROTOCOL_VERSION)
        if (this.onVersionRefused(message.id, message.error.data)) return;
      this.unanswered = 0;
      if ('result' in message) this.authorization.succeeded();
      this.pending.settleResponse(message);
      return;
    }
    if (isRequest(message)) {
      const roots = message.method === 'roots/list' ? this.savedSessionState?.roots : undefined;
      // Roots set with `setRoots` answer for this server; otherwise the `roots` handler does.
      if (roots) this.respond({ jsonrpc: '2.0', id: message.id, result: { roots } });
      else if (this.telemetry) this.telemetry.serve(message, this.serverRequests);
      else void this.serverRequests.handle(message);
      return;
    }
    if (message.method === 'notifications/tools/list_changed') this.outputSchemas?.invalidate();
    if (this.telemetry) this.telemetry.receive(message, this);
    else this.deliver(message);
  }

  /** Public for the telemetry, which delivers a notification inside the trace it carries. */
  deliver(notification: JsonRpcNotification): void {
    dispatchNotification(notification, this.events, this.serverRequests, this.pending);
  }

  isAwaiting(id: string | number): boolean {
    return this.pending.has(id);
  }

  onStreamError(error: Error): void {
    this.events.emit('warning', error);
  }

  /** The transport died: what was on the wire has an unknown outcome; the connection reconnects. */
  onClosed(error: Error): void {
    this.modernListens?.closeAll();
    const fatal = (error as { fatal?: unknown }).fatal === true; // e.g. a stdio server that died before its first handshake
    for (const request of this.pending.sentRequests()) {
      if (fatal || request.method === 'initialize' || this.pastGate.has(request)) {
        const closed = new ConnectionClosedError(`the connection was lost: ${error.message}`, {
          server: this.name,
          retryable: !fatal,
          fatal,
          cause: error,
        });
        this.pending.fail(request, closed);
      } else {
        this.onOutcomeUnknown(request, `the connection was lost (${error.message})`, error);
      }
    }
    this.tell({ type: 'CONNECTION_LOST', error: error.message, fatal });
  }

  /** An attempt is over (serving, or down): `start()`, `connect()` and `reconnect()` resolve. */
  settleAttempt(): void {
    this.settleFirstOutcome();
    const waiters = this.attemptWaiters;
    this.attemptWaiters = undefined;
    for (const resolve of waiters ?? []) resolve();
  }

  /** Resolves when the next attempt is over. */
  nextAttempt(): Promise<void> {
    return new Promise((resolve) => (this.attemptWaiters ??= []).push(resolve));
  }

  scheduleRevival(delayMs: number): void {
    this.nextAttemptAt = Date.now() + delayMs;
  }

  /** The connection actor threw (a bug): the server is failed, nothing waits forever. */
  onCrash(error: unknown): void {
    this.crashError = `the connection actor crashed: ${describeError(error)}`;
    const text = this.redact(this.crashError);
    // The machine is gone and says nothing more: its runtime tells the move into `failed`.
    tellFact(this, { type: 'gave up', reason: text, fatal: true });
    tellFact(this, { type: 'state changed', to: 'failed', cause: 'crashed', error: text });
    this.rejectWaitingRequests(text);
    this.settleFirstOutcome();
    void this.closeSession().catch(ignore);
  }
}

function ignore(): void {}

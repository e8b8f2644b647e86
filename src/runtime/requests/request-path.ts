/**
 * The request path of one server: a request goes straight to the transport while the gate is
 * open and nothing limits it (the hot path: one Map entry and a direct transport call), else it
 * waits in the gate: for the connection, or for its limits (request-limits.ts: `maxInFlight`,
 * `rateLimit`, a 429/503 window). A send that fails goes to recovery (recovery/recovery.ts),
 * which decides where it goes next; a 429/503 answer to the limits, which send it again.
 * Also here: notifications, cancellations, and the rounds of a multi round-trip request.
 */
import { ConnectionClosedError, QueueFullError } from '../../core/errors.js';
import { ServerBusyError } from '../../core/retry-after.js';
import { startOperation } from '../../observe/telemetry/server-telemetry.js';
import type { Operation } from '../../observe/telemetry/tracing.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { CreateOptions, PendingRequest } from '../../protocol/pending.js';
import { ToolOutputSchemas } from '../../protocol/tool-output.js';
import type { RequestOptions } from '../context/events.js';
import type { OriginMembership } from '../recovery/origin-membership.js';
import { Recovery } from '../recovery/recovery.js';
import type { HandlerContext } from '../server-input/server-requests.js';
import type { ReadOnlyContext, ServerContext } from '../context/server-context.js';
import { answerSetLevel } from './modern-logging.js';
import {
  completeRounds,
  DEFAULT_MAX_INPUT_ROUNDS,
  isInputRequired,
  mayRequireInput,
  roundEvent,
  type InputRequiredResult,
} from './multi-round-trip.js';
import { RequestLimits } from './request-limits.js';
import { ToolHeaders } from './tool-headers.js';

/** The context as the request path holds it: the tools' output schemas are its to write, nothing else. */
type PathContext = ReadOnlyContext & Pick<ServerContext, 'outputSchemas'>;

/** Who answers the embedded requests of a multi round-trip request (the runtime: roots, else the handlers). */
export interface InputAnswerer {
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>>;
}

export class RequestPath {
  /** SEP-2243: the tools' `x-mcp-header` declarations (modern Streamable HTTP only: built by its first tools list or call). */
  private headers: ToolHeaders | undefined = undefined;
  /** Where a failed send goes: built with the path, which is what it sends again through. */
  readonly recovery: Recovery;
  /** `maxInFlight`, `rateLimit` and 429/503 windows. */
  readonly limits: RequestLimits;

  constructor(
    private readonly context: PathContext,
    private readonly answerer: InputAnswerer,
    /** Told when requests start to wait and when the gate empties (recovery's capped backoff). */
    origin: Pick<OriginMembership, 'onWaiting' | 'onDrained'>,
    /** Retries of one multi round-trip request before it fails. */
    readonly maxInputRounds = DEFAULT_MAX_INPUT_ROUNDS,
  ) {
    this.limits = new RequestLimits(context, (request) => this.put(request, false));
    this.recovery = new Recovery(context, this, origin);
  }

  get toolHeaders(): ToolHeaders {
    return (this.headers ??= new ToolHeaders());
  }

  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown> {
    const context = this.context;
    if (method === 'tools/call' && this.mirrorsToolHeaders) {
      const refusal = this.headers?.refusal(params, context.name);
      if (refusal) return Promise.reject(refusal);
    }
    const operation = startOperation(context.observed, method, params); // undefined unless an OpenTelemetry SDK is registered
    const sent = operation?.params ?? params;
    const { request, promise: answered } = context.pending.create(method, sent, this.createOptions(options));
    // Modern era: an `InputRequiredResult` is answered through the handlers and sent again (multi-round-trip.ts).
    const promise = mayRequireInput(method)
      ? answered.then((result) =>
          isInputRequired(result) ? this.completeInputRounds(method, sent, options, result, operation) : result,
        )
      : answered;
    if (operation) context.telemetry?.track(request, promise, operation);
    context.calls?.track(request, promise);
    this.enqueue(request);
    // What the server says of its tools decides which calls may be replayed (replay-policy.ts)
    // and how their structured output is checked (tool-output.ts).
    if (method === 'tools/list')
      promise.then((result) => this.learnTools(result, params?.cursor === undefined), ignore);
    return promise;
  }

  private createOptions(options: RequestOptions | undefined): CreateOptions {
    return {
      timeoutMs: options?.timeoutMs ?? this.context.config.requestTimeoutMs,
      signal: options?.signal,
      onProgress: options?.onprogress,
      resetTimeoutOnProgress: options?.resetTimeoutOnProgress,
      maxTotalTimeoutMs: options?.maxTotalTimeoutMs,
      retry: options?.retry,
      holdMs: options?.holdMs,
      onId: options?.onid,
    };
  }

  /** Straight to the transport while the gate is open (the hot path), else it waits in the gate. */
  private enqueue(request: PendingRequest): void {
    const { pending, gate } = this.context;
    if (!pending.isPending(request)) return; // aborted before it was created
    const phase = gate.phase;
    if (phase === 'open') this.dispatch(request, false);
    else if (phase === 'closed') pending.fail(request, this.recovery.closedError());
    else if (gate.hold(request)) {
      pending.waits(request);
      this.recovery.onHeld();
      this.context.telemetry?.onHeld(request, this.context.observed.view.state());
    } else this.queueFull(request, false);
  }

  private queueFull(request: PendingRequest, ready: boolean): void {
    const error = new QueueFullError(this.context.config.maxQueuedRequests, { server: this.context.name, ready });
    this.context.pending.fail(request, error);
  }

  private completeInputRounds(
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestOptions | undefined,
    first: InputRequiredResult,
    operation: Operation | undefined,
  ): Promise<unknown> {
    return completeRounds(first, {
      server: this.context.name,
      method,
      params,
      maxRounds: this.maxInputRounds,
      signal: options?.signal,
      send: (retry) => {
        const { request, promise } = this.context.pending.create(method, retry, this.createOptions(options));
        this.enqueue(request);
        return promise;
      },
      answer: (inputMethod, inputParams, context) => this.answerer.answerInput(inputMethod, inputParams, context),
      onRound: operation?.span ? (round, result) => operation.span?.addEvent(...roundEvent(round, result)) : undefined,
    });
  }

  /** Modern Streamable HTTP: `x-mcp-header` parameters are mirrored, invalid tool definitions excluded. */
  get mirrorsToolHeaders(): boolean {
    return this.context.facts?.envelope !== undefined && this.context.transport?.kind === 'http';
  }

  private learnTools(result: unknown, firstPage: boolean): void {
    this.recovery.learnTools(result);
    if (this.mirrorsToolHeaders) this.toolHeaders.learn(result, firstPage);
    if (this.context.config.validateToolOutput)
      (this.context.outputSchemas ??= new ToolOutputSchemas()).learn(result, firstPage);
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    const context = this.context;
    const transport = context.transport;
    if (context.gate.phase !== 'open' || !transport) {
      if (context.gate.phase === 'closed') throw this.recovery.closedError();
      throw new ConnectionClosedError(`cannot send '${method}': the connection is ${context.observed.view.state()}`, {
        server: context.name,
        retryable: true,
      });
    }
    const operation = startOperation(context.observed, method, params);
    if (operation) params = operation.params;
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    const sent = transport.send(message);
    operation?.settle(sent, method);
    await sent;
  }

  /**
   * Sends one request (`handshake`: the `initialize`, never limited) unless a limit holds it:
   * while nothing limits and fewer than `maxInFlight` are on the wire, straight to `put`.
   */
  dispatch(request: PendingRequest, handshake: boolean): void {
    const limits = this.limits;
    if (handshake || (limits.free && limits.inFlight() <= limits.maxInFlight)) this.put(request, handshake);
    else if (!limits.admit(request)) this.queueFull(request, true);
  }

  /** Puts one request on the wire; with no transport it waits or fails. */
  private put(request: PendingRequest, handshake: boolean): void {
    const context = this.context;
    const transport = context.transport;
    if (!transport) {
      this.recovery.waitOrFail(request);
      return;
    }
    const envelope = context.facts?.envelope;
    // Modern era: no `logging/setLevel`; the level rides in every later request's `_meta`.
    if (envelope && request.method === 'logging/setLevel') return answerSetLevel(request, envelope, context);
    request.sent = true;
    request.sends++;
    if (request.callDueAt !== undefined) context.pending.sending(request);
    context.telemetry?.onSend(request);
    // Modern era: the `_meta` envelope, built per send (a replay after a version change carries the new one).
    const params = envelope ? envelope.wrap(request.params) : request.params;
    const message: JsonRpcRequest = { jsonrpc: '2.0', id: request.id, method: request.method, params };
    const headers =
      envelope && transport.kind === 'http' ? this.headers?.headersFor(request.method, request.params) : undefined;
    const sends = request.sends;
    transport
      .send(message, { signal: request, handshake, timeoutMs: request.timeoutMs, headers })
      .catch((error: unknown) => {
        // Moved on since (parked by a loss report, sent again): this send's failure is old news,
        // and acting on it again would send the request twice.
        if (!request.sent || request.sends !== sends) return;
        // 429/503: not processed; the limits hold it for the window (unless its timeout ends first).
        if (error instanceof ServerBusyError && !handshake && this.limits.onBusy(request, error)) return;
        this.recovery.onSendFailure(request, error);
      });
  }

  /**
   * The draft rate-limit error (-32023, `data.retryAfterMs`): backpressure like a 429 (the window,
   * clamped by `maxRetryAfterMs`); false when the wait would outlast the request (it gets the error).
   */
  onRateLimited(request: PendingRequest, error: { message: string; data?: unknown }): boolean {
    if (request.method === 'initialize' || this.context.pastGate.has(request)) return false;
    const asked = (error.data as { retryAfterMs?: unknown } | null | undefined)?.retryAfterMs;
    const retryAfterMs = typeof asked === 'number' && Number.isFinite(asked) && asked >= 0 ? asked : undefined;
    const busy = new ServerBusyError(`JSON-RPC -32023 for '${request.method}': ${error.message}`, 429, retryAfterMs, {
      server: this.context.name,
    });
    return this.limits.onBusy(request, busy);
  }

  /** A request given up on (timeout, abort): the server is told, unless closing its stream already did. */
  sendCancellation(request: PendingRequest, reason: string): void {
    const transport = this.context.transport;
    if (this.context.gate.phase !== 'open' || !transport) return;
    // Modern Streamable HTTP: closing the request's response stream (done when it failed) is the cancellation.
    if (this.context.facts?.envelope && transport.kind === 'http') return;
    transport
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason } })
      .catch(ignore);
  }
}

function ignore(): void {}

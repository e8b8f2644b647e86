/**
 * One supervised connection behind the transport seam that the official SDK's `Client` (v1 and
 * v2) and the AI SDK's MCP client share. The client keeps its code; the connection recovers
 * sessions, rides out outages (its sends are held; the client's own request timeout is the
 * bound), restarts stdio children and falls back to legacy SSE.
 *
 * The rules the clients' own code imposes (docs/migrating-from-sdk.md):
 * - `onclose` is final for a client (it rejects everything pending): it fires only on `close()`
 *   or when supervision gives up (`revive: false` and the server failed). Recoverable events
 *   reach `onerror`, which the SDK documents as non-fatal.
 * - `sessionId` is undefined until the supervised handshake is done (a client that sees one
 *   before `connect` skips `initialize`), then one id of the transport's own, for good.
 * - The client's `initialize` starts the connection and is answered from its handshake; what the
 *   client learned stays true across the connection's re-initializations, which it never sees.
 * - The connection's own traffic (handshakes, probes, keepalive) never reaches `onmessage`, nor
 *   an answer to a request the client cancelled. After a re-initialization the client hears
 *   `list_changed` for every list the server says can change: the new session may list others.
 *   The logging level and the subscriptions it set are set again on every new session.
 */
import { randomUUID } from 'node:crypto';
import {
  connect,
  OutcomeUnknownError,
  type CallToolResult,
  type ConnectOptions,
  type RequestOptions,
  type ServerConfigInput,
  type ServerHandle,
  type TransitionEvent,
} from '../../index.js';
import { ClientAsks } from './client-asks.js';
import { isObject } from '../../core/is-object.js';
import { keptRequest } from './kept-requests.js';
import { interceptorList, interceptToolCall, type ToolCallInterceptor } from '../../tools/interceptors.js';
import {
  askedInEnvelope,
  errorOf,
  handlersFor,
  initializeResult,
  METHOD_NOT_FOUND,
  progressOf,
  samplingOptionsFor,
  splitProgress,
  type MessageId,
  type WireError,
  type WireMessage,
  withoutEnvelope,
} from './wire.js';
import { isModernVersion } from '../../protocol/era.js';
import { mayReplay } from '../../runtime/recovery/replay-policy.js';
import { isEnded } from '../../../machines/connection.machine.js';

/** The connection's options, as for `connect()`; `clientInfo` and the handlers come from the client's `initialize`. */
export type SupervisedTransportOptions = Omit<ConnectOptions, 'handlers' | 'clientInfo' | 'sampling'>;

/** What a client may pass with a message (the SDK's `TransportSendOptions`, the AI SDK's `MCPTransportSendOptions`). */
export interface SupervisedSendOptions {
  relatedRequestId?: MessageId | undefined;
  /**
   * A stream of an earlier connection to resume (the SDK's transport GETs it with `Last-Event-ID`).
   * This connection resumes its own streams itself and cannot resume another's: a read is sent
   * again, anything else is answered OUTCOME_UNKNOWN (resumption.ts; docs/migrating-from-sdk.md).
   */
  resumptionToken?: string | undefined;
  /** Never called: there is no stream the client would have to resume (the connection does it). */
  onresumptiontoken?: ((token: string) => void) | undefined;
  /** SDK v2: aborting it cancels this request (as `notifications/cancelled` does). */
  requestSignal?: AbortSignal | undefined;
  /** SDK v2: never called: every request the client sent gets an answer, a result or an error. */
  onRequestStreamEnd?: (() => void) | undefined;
  /** SDK v2: the connection sets the SEP-2243 `Mcp-Param-*` headers itself from the tool's declarations. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** AI SDK: aborting it cancels this request. */
  signal?: AbortSignal | undefined;
}

/** Longest a timer may wait: the client's own timeout bounds a held request, not the connection's. */
const CLIENT_BOUND_MS = 2_147_483_647;
const SENT: Promise<void> = Promise.resolve();
const LISTS = ['tools', 'prompts', 'resources'] as const;

export class SupervisedTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: WireMessage, extra?: unknown) => void) | undefined;
  /** SDK v2: each request can be cancelled on its own (`requestSignal`). */
  readonly hasPerRequestStream = true;
  /** The version the client settled on (`setProtocolVersion`); the wire speaks the server's. */
  protocolVersion: string | undefined;

  private handle: ServerHandle | undefined;
  private connecting: Promise<ServerHandle> | undefined;
  private ownSessionId: string | undefined;
  private initializeAnswer: Record<string, unknown> | undefined;
  private supportedVersions: readonly string[] | undefined;
  private readonly inFlight = new Map<MessageId, AbortController>();
  private readonly asks = new ClientAsks((message) => this.deliver(message));
  private unsubscribe: (() => void)[] = [];
  private closed = false;
  private readonly timeoutMs: number | undefined;
  /** The options' call interceptors: the client's `tools/call` goes through them (none: straight on). */
  private readonly interceptors: readonly ToolCallInterceptor[] | undefined;

  constructor(
    private readonly config: ServerConfigInput,
    private readonly options: SupervisedTransportOptions = {},
  ) {
    // A timeout the user configured stays theirs; otherwise the client's own timeout is the bound.
    this.timeoutMs = isObject(config) && 'requestTimeoutMs' in config ? undefined : CLIENT_BOUND_MS;
    this.interceptors = interceptorList(options.interceptors);
  }

  /** Undefined until the supervised handshake is done; then the transport's own id for good. */
  get sessionId(): string | undefined {
    return this.ownSessionId;
  }

  /** The supervised connection once the client's `initialize` started it (status, events, `reconnect()`). */
  get server(): ServerHandle | undefined {
    return this.handle;
  }

  start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the supervised transport is closed; make a new one'));
    return SENT;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = versions;
  }

  send(message: WireMessage, options?: SupervisedSendOptions): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the supervised transport is closed'));
    const method = message.method;
    const id = message.id;
    if (method === undefined) {
      // An answer to one of the server's requests; anything else is not ours to forward.
      this.asks.answer(message);
      return SENT;
    }
    if (id === undefined || id === null) return this.notification(method, message.params);
    if (method === 'initialize') void this.initialize(id, message.params);
    else if (method === 'server/discover')
      this.answerError(id, { code: METHOD_NOT_FOUND, message: 'Method not found' });
    // The connection keeps its own listen open; the server's notifications reach the client without one.
    else if (method === 'subscriptions/listen')
      this.answerError(id, {
        code: METHOD_NOT_FOUND,
        message: "the supervised transport listens itself: the server's notifications reach the client's handlers",
      });
    else this.request(id, method, message.params, options);
    return SENT;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.unsubscribe) stop();
    this.unsubscribe = [];
    for (const controller of this.inFlight.values()) controller.abort();
    this.inFlight.clear();
    this.asks.closeAll(this.handle?.name ?? 'server');
    const handle = this.handle ?? (await this.connecting?.catch(() => undefined));
    this.ownSessionId = undefined;
    await handle?.close();
    this.onclose?.();
  }

  // ---- the client's requests

  private request(id: MessageId, method: string, raw: unknown, sendOptions: SupervisedSendOptions | undefined): void {
    const handle = this.handle;
    if (!handle) {
      // SDK v2 `connect(transport, { prior: { kind: 'modern', … } })`: no initialize; the first request opens.
      if (this.clientIsModern) return void this.openFor(id, method, raw, sendOptions);
      return this.answerError(id, { code: -32002, message: 'not initialized: send initialize first' });
    }
    // A stream of another connection cannot be resumed here: the request is sent again only when that is safe.
    if (sendOptions?.resumptionToken !== undefined && !mayResend(method, handle.name, (e) => this.answerError(id, e)))
      return;
    const split = splitProgress(raw);
    const params = this.clientIsModern ? withoutEnvelope(split.params) : split.params;
    const progressToken = split.progressToken;
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    const options: RequestOptions = { signal: controller.signal, timeoutMs: this.timeoutMs };
    if (progressToken !== undefined)
      options.onprogress = (progress) => this.inFlight.has(id) && this.deliver(progressOf(progressToken, progress));
    const signal = sendOptions?.requestSignal ?? sendOptions?.signal;
    const onAbort = signal && (() => this.cancel(id));
    if (onAbort) signal.addEventListener('abort', onAbort, { once: true });
    const interceptors = this.interceptors;
    const sent =
      keptRequest(handle, method, params, options) ??
      (interceptors !== undefined && method === 'tools/call'
        ? interceptedToolCall(interceptors, handle, params, options)
        : handle.request(method, params, options));
    sent.then(
      (result) => this.answer(id, { jsonrpc: '2.0', id, result }, signal, onAbort),
      (error: unknown) => this.answer(id, { jsonrpc: '2.0', id, error: errorOf(error) }, signal, onAbort),
    );
  }

  private answer(id: MessageId, message: WireMessage, signal?: AbortSignal, onAbort?: () => void): void {
    // The client's signal may outlive the request (a shared one): its listener must not.
    if (onAbort) signal!.removeEventListener('abort', onAbort);
    // A request the client cancelled is no longer awaited: its answer would be one it did not ask for.
    if (this.inFlight.delete(id)) this.deliver(message);
  }

  private answerError(id: MessageId, error: WireError): void {
    this.deliver({ jsonrpc: '2.0', id, error });
  }

  private cancel(id: MessageId): void {
    const controller = this.inFlight.get(id);
    if (!controller) return;
    this.inFlight.delete(id);
    controller.abort();
  }

  private notification(method: string, params: unknown): Promise<void> {
    switch (method) {
      case 'notifications/initialized':
        return SENT; // the connection's own handshake sent it
      case 'notifications/cancelled': {
        const requestId = isObject(params) ? params.requestId : undefined;
        if (typeof requestId === 'string' || typeof requestId === 'number') this.cancel(requestId);
        return SENT;
      }
      default: {
        const handle = this.handle;
        if (!handle) return SENT;
        // Not serving right now: a notification is not held; the client hears of it as a non-fatal error.
        return handle.notify(method, isObject(params) ? params : undefined).catch((error: unknown) => {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        });
      }
    }
  }

  /** The client speaks 2026-07-28 (it said so with `setProtocolVersion`): its requests carry its envelope. */
  private get clientIsModern(): boolean {
    return isModernVersion(this.protocolVersion);
  }

  /** The connection opened for a client that sent no `initialize`, from what its first request says of it. */
  private async openFor(
    id: MessageId,
    method: string,
    raw: unknown,
    sendOptions: SupervisedSendOptions | undefined,
  ): Promise<void> {
    try {
      await (this.connecting ??= this.open(askedInEnvelope(raw)));
      this.ownSessionId ??= randomUUID();
    } catch (error) {
      this.connecting = undefined;
      return this.answerError(id, errorOf(error));
    }
    if (!this.closed) this.request(id, method, raw, sendOptions);
  }

  // ---- the handshake

  private async initialize(id: MessageId, params: unknown): Promise<void> {
    const asked = isObject(params) ? params : {};
    try {
      const handle = this.handle ?? (await (this.connecting ??= this.open(asked)));
      if (this.closed) return;
      const handshake = handle.handshake();
      if (!handshake) throw new Error('the supervised connection has no session');
      // A second `initialize` (a client that connects again) hears what the first one did.
      this.initializeAnswer ??= initializeResult(handshake, asked.protocolVersion, this.supportedVersions);
      this.ownSessionId ??= randomUUID();
      this.deliver({ jsonrpc: '2.0', id, result: this.initializeAnswer });
    } catch (error) {
      this.connecting = undefined;
      this.answerError(id, errorOf(error));
    }
  }

  private async open(asked: Record<string, unknown>): Promise<ServerHandle> {
    const clientInfo = isObject(asked.clientInfo) ? (asked.clientInfo as { name: string; version: string }) : undefined;
    const handlers = handlersFor(asked.capabilities, (method, params, signal) => this.asks.ask(method, params, signal));
    const handle = await connect(
      this.config,
      Object.assign({}, this.options, { clientInfo, handlers, sampling: samplingOptionsFor(asked.capabilities) }),
    );
    if (this.closed) {
      await handle.close();
      throw new Error('the supervised transport was closed during the handshake');
    }
    this.handle = handle;
    this.unsubscribe.push(
      handle.on('notification', (notification) => this.serverNotification(notification as WireMessage)),
      handle.on('transition', (event) => this.transition(event)),
    );
    return handle;
  }

  // ---- what the server says

  private serverNotification(notification: WireMessage): void {
    // Progress goes to the request's own token (onprogress); a cancellation of a server request
    // reaches the client as ours (client-asks.ts).
    const method = notification.method;
    if (method === 'notifications/progress' || method === 'notifications/cancelled') return;
    this.deliver(notification);
  }

  private transition(event: TransitionEvent): void {
    if (this.closed) return;
    // A failed server that revives comes back: the client keeps its transport meanwhile.
    if (isEnded(event.to, !(isObject(this.config) && this.config.revive === false))) {
      void this.close();
      return;
    }
    // A new session may list other tools, prompts or resources than the one the client read.
    if (event.to === 'ready') this.announceLists();
    if (event.error !== undefined)
      this.onerror?.(new Error(`[${event.server}] ${event.from} -> ${event.to}: ${event.cause} (${event.error})`));
  }

  /** After a re-initialization: `list_changed` for each list the client was told can change, so it reads it again. */
  private announceLists(): void {
    const capabilities = this.initializeAnswer?.capabilities;
    if (!isObject(capabilities)) return;
    for (const list of LISTS) {
      const capability = capabilities[list];
      if (isObject(capability) && capability.listChanged === true)
        this.deliver({ jsonrpc: '2.0', method: `notifications/${list}/list_changed` });
    }
  }

  private deliver(message: WireMessage): void {
    if (!this.closed) this.onmessage?.(message);
  }
}

/**
 * The client's `tools/call` through the call interceptors given to the transport
 * (tools/interceptors.ts): as `handle.callTool` would run them, but the server's answer goes
 * back to the client as it came (its own `Client` checks it).
 */
function interceptedToolCall(
  interceptors: readonly ToolCallInterceptor[],
  handle: ServerHandle,
  params: Record<string, unknown> | undefined,
  options: RequestOptions,
): Promise<unknown> {
  const tool = typeof params?.name === 'string' ? params.name : '';
  const args = isObject(params?.arguments) ? params.arguments : {};
  return interceptToolCall(interceptors, { server: handle.name, tool, arguments: args, options }, (call) =>
    handle.request<CallToolResult>(
      'tools/call',
      Object.assign({}, params, { name: call.tool, arguments: call.arguments }),
      call.options,
    ),
  );
}

/**
 * True when the request may be sent as itself; otherwise it was answered with the error.
 *
 * A client's `send(message, { resumptionToken })`: it asks to resume the response stream of a
 * request an earlier connection sent (the SDK's own transport GETs it with `Last-Event-ID`). The
 * supervised connection resumes its own streams itself, so its client never needs a token; a
 * token from elsewhere names a stream of another session, which cannot be resumed here. The
 * server may have run that request: it is sent again only when repeating it is safe (a method
 * that only reads); anything else, a tool call above all, is answered OUTCOME_UNKNOWN and the
 * application decides.
 */
function mayResend(method: string, server: string, answerError: (error: WireError) => void): boolean {
  if (mayReplay(method, undefined, 'safe', undefined)) return true;
  answerError(
    errorOf(
      new OutcomeUnknownError(method, 'the stream of an earlier connection it was to resume (resumptionToken) ended', {
        server,
      }),
    ),
  );
  return false;
}

/**
 * Requests the server sends to the client (on any stream): `ping` is answered at once;
 * `elicitation/create` (form or URL mode), `sampling/createMessage` and `roots/list` go to the
 * user's handlers; anything else is answered -32601. A handler's signal aborts when the server
 * cancels the request; a cancelled request gets no response (spec: the receiver SHOULD NOT
 * answer). The modern era's embedded requests (multi-round-trip.ts) reach the same handlers
 * through `answer()`.
 */
import { describeError } from '../../core/errors.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId } from '../../protocol/jsonrpc.js';
import { applyElicitationDefaults } from './elicitation-defaults.js';
import type { ClientCapabilities } from '../../protocol/messages.js';

export interface HandlerContext {
  server: string;
  /** Aborted when the server sends `notifications/cancelled` for this request, or the connection closes. */
  signal: AbortSignal;
  /** The JSON-RPC id; for an embedded request of a multi round-trip request, the server's key for it. */
  requestId: RequestId;
}

export type Handler<Params = Record<string, unknown>, Result = Record<string, unknown>> = (
  params: Params,
  context: HandlerContext,
) => Result | Promise<Result>;

/** Server-to-client requests handlers. Only those given are advertised as capabilities. */
export interface ClientHandlers {
  /** `elicitation/create` in form mode → `{ action: 'accept' | 'decline' | 'cancel', content? }` */
  elicitation?: Handler;
  /**
   * `elicitation/create` with `mode: 'url'` (spec 2025-11-25): show `message`, let the user open
   * `url` out of band → `{ action: 'accept' | 'decline' | 'cancel' }`. Given: `elicitation.url` is advertised.
   */
  urlElicitation?: Handler;
  /** `sampling/createMessage` → `{ role, content, model, stopReason? }` */
  sampling?: Handler;
  /** `roots/list` → `{ roots: [{ uri, name? }] }` */
  roots?: Handler;
}

export interface ElicitationOptions {
  /** Fill fields the handler left out of an accepted form with the schema's defaults (SEP-1034). */
  applyDefaults?: boolean;
}

export interface SamplingOptions {
  /** The `sampling` handler takes `tools`/`toolChoice` and may answer `tool_use` content (`sampling.tools`, spec 2025-11-25). */
  tools?: boolean;
  /** The handler honours `includeContext` (`sampling.context`). */
  context?: boolean;
}

/** A server asked for something no handler answers: the -32601 of the 2025 era, an error of the call in the modern one. */
export class NoHandlerError extends Error {}

const METHODS: Record<string, keyof ClientHandlers> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** Shared by every server that has none: an empty object each would be held per idle server. */
export const NO_HANDLERS: ClientHandlers = Object.freeze({});
export const NO_ELICITATION_OPTIONS: ElicitationOptions = Object.freeze({});

export function capabilitiesFor(
  handlers: ClientHandlers,
  elicitation: ElicitationOptions = {},
  sampling: SamplingOptions = {},
): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (handlers.roots) capabilities.roots = { listChanged: true };
  if (handlers.sampling) {
    capabilities.sampling = {};
    if (sampling.tools) capabilities.sampling.tools = {};
    if (sampling.context) capabilities.sampling.context = {};
  }
  if (handlers.elicitation || handlers.urlElicitation) {
    capabilities.elicitation = {};
    if (handlers.elicitation) capabilities.elicitation.form = elicitation.applyDefaults ? { applyDefaults: true } : {};
    if (handlers.urlElicitation) capabilities.elicitation.url = {};
  }
  return capabilities;
}

function modeOf(params: Record<string, unknown>): string {
  return typeof params.mode === 'string' ? params.mode : 'form';
}

/** The handler for a request, by method (and elicitation mode); undefined when none was given. */
function handlerFor(handlers: ClientHandlers, method: string, params: Record<string, unknown>): Handler | undefined {
  if (method === 'elicitation/create' && params.mode === 'url') return handlers.urlElicitation;
  const name = METHODS[method];
  return name ? handlers[name] : undefined;
}

export class ServerRequests {
  /** Created by the first server request: an idle connection holds no empty Map. */
  private active: Map<RequestId, AbortController> | undefined;

  constructor(
    private readonly server: string,
    private readonly handlers: ClientHandlers,
    private readonly elicitation: ElicitationOptions,
    private readonly respond: (message: JsonRpcMessage) => void,
  ) {}

  /** Resolves with the response sent (none when the server cancelled it): telemetry reads its outcome. */
  handle(request: JsonRpcRequest): Promise<JsonRpcResponse | undefined> {
    if (request.method === 'ping') return Promise.resolve(this.send({ jsonrpc: '2.0', id: request.id, result: {} }));
    const params = request.params ?? {};
    if (!handlerFor(this.handlers, request.method, params)) {
      // Elicitation is supported, only not in this mode: the params are what is wrong.
      const otherMode = request.method === 'elicitation/create' && capabilitiesFor(this.handlers).elicitation;
      const error = otherMode
        ? {
            code: -32602,
            message: `elicitation mode '${modeOf(params)}' is not supported by this client`,
          }
        : { code: -32601, message: `Method not found: ${request.method}` };
      return Promise.resolve(this.send({ jsonrpc: '2.0', id: request.id, error }));
    }
    const controller = new AbortController();
    (this.active ??= new Map()).set(request.id, controller);
    const context: HandlerContext = { server: this.server, signal: controller.signal, requestId: request.id };
    // Settles into a response whatever the handler does: the chain cannot reject.
    return this.answer(request.method, params, context)
      .then(
        (result) => ({ jsonrpc: '2.0' as const, id: request.id, result }),
        (error: unknown) => ({
          jsonrpc: '2.0' as const,
          id: request.id,
          error: { code: -32603, message: describeError(error) },
        }),
      )
      .then((response: JsonRpcResponse) => {
        if (this.active?.get(request.id) !== controller) return undefined;
        this.active.delete(request.id);
        return controller.signal.aborted ? undefined : this.send(response);
      });
  }

  /** One request's result from its handler; rejects with the handler's error, or `NoHandlerError`. */
  answer(method: string, params: Record<string, unknown>, context: HandlerContext): Promise<Record<string, unknown>> {
    const handler = handlerFor(this.handlers, method, params);
    if (!handler) {
      const what = method === 'elicitation/create' ? `elicitation mode '${modeOf(params)}'` : method;
      return Promise.reject(new NoHandlerError(`no handler for ${what} was given`));
    }
    return Promise.resolve()
      .then(() => handler(params, context))
      .then((result) =>
        method === 'elicitation/create' && params.mode !== 'url' && this.elicitation.applyDefaults
          ? applyElicitationDefaults(params, result)
          : result,
      );
  }

  private send(response: JsonRpcResponse): JsonRpcResponse {
    this.respond(response);
    return response;
  }

  /** `notifications/cancelled` from the server: unknown or finished ids are ignored. */
  cancel(requestId: unknown, reason?: unknown): void {
    const controller = this.active?.get(requestId as RequestId);
    if (!controller) return;
    this.active?.delete(requestId as RequestId);
    controller.abort(typeof reason === 'string' ? reason : 'cancelled by the server');
  }

  abortAll(reason: string): void {
    if (!this.active) return;
    for (const controller of this.active.values()) controller.abort(reason);
    this.active.clear();
  }
}

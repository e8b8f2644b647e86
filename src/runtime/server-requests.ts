/**
 * Requests the server sends to the client (on any stream): `ping` is answered at once;
 * `elicitation/create`, `sampling/createMessage` and `roots/list` go to the user's handlers;
 * anything else is answered -32601. A handler's signal aborts when the server cancels the
 * request; a cancelled request gets no response (spec: the receiver SHOULD NOT answer).
 */
import { describeError } from '../errors.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, RequestId } from '../protocol/jsonrpc.js';
import { applyElicitationDefaults } from './elicitation-defaults.js';
import type { ClientCapabilities } from '../protocol/messages.js';

export interface HandlerContext {
  server: string;
  /** Aborted when the server sends `notifications/cancelled` for this request, or the connection closes. */
  signal: AbortSignal;
  requestId: RequestId;
}

export type Handler<Params = Record<string, unknown>, Result = Record<string, unknown>> = (
  params: Params,
  context: HandlerContext,
) => Result | Promise<Result>;

/** Server-to-client request handlers. Only those given are advertised as capabilities. */
export interface ClientHandlers {
  /** `elicitation/create` → `{ action: 'accept' | 'decline' | 'cancel', content? }` */
  elicitation?: Handler;
  /** `sampling/createMessage` → `{ role, content, model, stopReason? }` */
  sampling?: Handler;
  /** `roots/list` → `{ roots: [{ uri, name? }] }` */
  roots?: Handler;
}

export interface ElicitationOptions {
  /** Fill fields the handler left out of an accepted form with the schema's defaults (SEP-1034). */
  applyDefaults?: boolean;
}

const METHODS: Record<string, keyof ClientHandlers> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** Shared by every server that has none: an empty object each would be held per idle server. */
export const NO_HANDLERS: ClientHandlers = Object.freeze({});
export const NO_ELICITATION_OPTIONS: ElicitationOptions = Object.freeze({});

export function capabilitiesFor(handlers: ClientHandlers, elicitation: ElicitationOptions = {}): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (handlers.roots) capabilities.roots = { listChanged: true };
  if (handlers.sampling) capabilities.sampling = {};
  if (handlers.elicitation)
    capabilities.elicitation = { form: elicitation.applyDefaults ? { applyDefaults: true } : {} };
  return capabilities;
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
    if (request.method === 'ping') return Promise.resolve(this.answer({ jsonrpc: '2.0', id: request.id, result: {} }));
    const name = METHODS[request.method];
    const handler = name ? this.handlers[name] : undefined;
    if (!handler) {
      return Promise.resolve(
        this.answer({
          jsonrpc: '2.0',
          id: request.id,
          error: { code: -32601, message: `Method not found: ${request.method}` },
        }),
      );
    }
    const controller = new AbortController();
    (this.active ??= new Map()).set(request.id, controller);
    const params = request.params ?? {};
    const context: HandlerContext = { server: this.server, signal: controller.signal, requestId: request.id };
    // Settles into a response whatever the handler does: the chain cannot reject.
    return Promise.resolve()
      .then(() => handler(params, context))
      .then(
        (result) => {
          const final =
            name === 'elicitation' && this.elicitation.applyDefaults
              ? applyElicitationDefaults(params, result)
              : result;
          return { jsonrpc: '2.0' as const, id: request.id, result: final };
        },
        (error: unknown) => ({
          jsonrpc: '2.0' as const,
          id: request.id,
          error: { code: -32603, message: describeError(error) },
        }),
      )
      .then((response: JsonRpcResponse) => {
        if (this.active?.get(request.id) !== controller) return undefined;
        this.active.delete(request.id);
        return controller.signal.aborted ? undefined : this.answer(response);
      });
  }

  private answer(response: JsonRpcResponse): JsonRpcResponse {
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

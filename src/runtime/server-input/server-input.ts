/**
 * Answering the server: its requests (sampling, elicitation, roots, ping) through the client's
 * handlers, roots set with `setRoots` first, and the embedded requests of a multi round-trip
 * request. Built by the first of them: an idle server holds none.
 */
import type { JsonRpcMessage, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import {
  ServerRequests,
  type ClientHandlers,
  type ElicitationOptions,
  type HandlerContext,
} from './server-requests.js';

export class ServerInput {
  readonly requests: ServerRequests;

  constructor(
    private readonly context: ReadOnlyContext,
    handlers: ClientHandlers,
    elicitation: ElicitationOptions,
  ) {
    this.requests = new ServerRequests(context.name, handlers, elicitation, (response) => this.respond(response));
  }

  /** Answers a server's request on the current transport. */
  respond(response: JsonRpcMessage): void {
    this.context.transport
      ?.send(response)
      .catch((error: unknown) => this.context.events.emit('warning', error as Error));
  }

  /** A request from the server: roots set with `setRoots` answer `roots/list` for this server; otherwise the handlers do. */
  serve(message: JsonRpcRequest): void {
    const context = this.context;
    const roots = message.method === 'roots/list' ? context.savedSessionState?.roots : undefined;
    if (roots) this.respond({ jsonrpc: '2.0', id: message.id, result: { roots } });
    else if (context.telemetry) context.telemetry.serve(message, this.requests);
    else void this.requests.handle(message);
  }

  /** An embedded request of a multi round-trip request: roots set with `setRoots` answer `roots/list`, else the handlers. */
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>> {
    const roots = method === 'roots/list' ? this.context.savedSessionState?.roots : undefined;
    if (roots) return Promise.resolve({ roots });
    return this.requests.answer(method, params, context);
  }
}

/**
 * The per-server facade users hold. It stays valid across re-initializations and restarts:
 * it talks to the server's runtime, never to a particular session or transport. Each method
 * delegates: tools to tools/, tasks to tasks/, settings to session-settings.ts, the status to
 * server-status.ts.
 */
import type { z } from 'zod';
import { McpError } from '../core/errors.js';
import type { CallToolResult, ListToolsResult } from '../protocol/messages.js';
import { allPages } from '../protocol/pagination.js';
import { eventsOf } from '../events/handle-events.js';
import type { ServerEvents } from '../events/server-events.js';
import {
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  parseResult,
  ReadResourceResultSchema,
  type CompleteResult,
  type CompletionReference,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type LoggingLevel,
  type ReadResourceResult,
} from '../protocol/results.js';
import { subscribeResource, unsubscribeResource } from '../runtime/listening/resource-subscriptions.js';
import type { Root } from '../runtime/context/session-state.js';
import type { RejectedTool } from '../runtime/requests/tool-headers.js';
import type { StoredState } from '../runtime/stored/stored-state.js';
import type { RequestOptions, RuntimeEvents } from '../runtime/context/events.js';
import type { ServerPort } from '../runtime/server-port.js';
import { serverHandshake, type ServerHandshake } from './handshake.js';
import { serverStatus, type ServerStatus } from './status.js';
import { setLoggingLevel, setRoots } from './session-settings.js';
import type { TaskClient } from '../tasks/task-client.js';
import type { TaskHandle } from '../tasks/task-handle.js';
import type { TaskCallOptions } from '../tasks/tool-call.js';
import type { ToolCallInterceptor } from '../tools/interceptors.js';
import { ServerTools } from '../tools/server-tools.js';

/** Declared beside its assembly (server-status.ts); importers keep naming the handle. */
export type { ServerStatus } from './status.js';

export interface HandleOwner {
  restartsOf(server: string): number;
  closeServer(server: string): Promise<void>;
  reconnectServer(server: string): Promise<void>;
}

export class ServerHandle {
  /** Made by the first tool call, listing or task method (an idle handle holds none). */
  private toolState: ServerTools | undefined;

  constructor(
    /** The server's runtime, as its port: what it is and learned, read only, and the ways in. */
    private readonly runtime: ServerPort,
    private readonly owner: HandleOwner,
    /** The supervisor's call interceptors (tools/interceptors.ts); undefined when none. */
    private readonly interceptors?: readonly ToolCallInterceptor[],
  ) {}

  get name(): string {
    return this.runtime.context.name;
  }

  /** Any method; resolves with the result, rejects with McpError or another typed error. */
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: RequestOptions): Promise<T> {
    return this.runtime.request(method, params, options) as Promise<T>;
  }

  /**
   * Calls a tool, through the call interceptors if any (docs/interceptors.md). The result is checked (InvalidResultError on a malformed one) and, when the
   * tool declares an `outputSchema`, its `structuredContent` too (ToolOutputError naming the
   * path; `validateToolOutput: false` in the server's config turns this off).
   */
  callTool(name: string, args: Record<string, unknown> = {}, options?: RequestOptions): Promise<CallToolResult> {
    return this.tools.call(name, args, options);
  }

  /**
   * Calls a tool as a task and returns at once with its TaskHandle (`status()`, `result()`,
   * `cancel()`). 2025-11-25: asks for a task (`ttlMs` the lifetime wished); a tool whose
   * `execution.taskSupport` is forbidden, or a server without task support, is a ConfigError.
   * 2026-07-28: the server decides; a call it answered at once has no `taskId`. Through the call
   * interceptors, as `callTool` (docs/interceptors.md#calls-made-as-tasks).
   */
  callToolAsTask(
    name: string,
    args: Record<string, unknown> = {},
    options?: TaskCallOptions,
  ): Promise<TaskHandle<CallToolResult>> {
    return this.tools.callAsTask(name, args, options);
  }

  /**
   * Experimental (SEP-3415 is a draft; docs/events.md): the server's event types and
   * subscriptions (poll, push, webhook) supervised as children of its connection.
   */
  get events(): ServerEvents {
    return eventsOf(this.runtime);
  }

  /** Tasks by id: `get`, `result`, `open`, `cancel`, `list` (2025-11-25), `update` (2026-07-28). */
  get tasks(): TaskClient<CallToolResult> {
    return this.tools.taskClient;
  }

  /**
   * Every tool, following `nextCursor` across pages. On the modern Streamable HTTP wire, tools
   * whose `x-mcp-header` annotations break the spec are left out (a `warning` event names each).
   */
  listTools(options?: RequestOptions): Promise<ListToolsResult> {
    return this.tools.list(options);
  }

  /** The tools the last `tools/list` left out (invalid `x-mcp-header` annotations), and why. */
  rejectedTools(): RejectedTool[] {
    return this.tools.rejected();
  }

  /** @internal The server's tool lists in the supervisor's store, for the catalog (undefined without a store). */
  get storedTools(): StoredState | undefined {
    return this.runtime.context.stored;
  }

  /** Every resource, across pages. */
  listResources(options?: RequestOptions): Promise<ListResourcesResult> {
    return this.pages('resources/list', 'resources', ListResourcesResultSchema, options);
  }

  /** Every resource template, across pages. */
  listResourceTemplates(options?: RequestOptions): Promise<ListResourceTemplatesResult> {
    return this.pages('resources/templates/list', 'resourceTemplates', ListResourceTemplatesResultSchema, options);
  }

  async readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult> {
    const raw = await this.request('resources/read', { uri }, options);
    return parseResult(ReadResourceResultSchema, 'resources/read', raw, this.name);
  }

  /**
   * `notifications/resources/updated` for `uri` then arrive as `on('resourceUpdated')`. The
   * subscription outlives the session: every new session subscribes again (session-state.ts).
   * Modern era (2026-07-28): no `resources/subscribe`; the listener's `subscriptions/listen` is
   * issued again with the URI, and this resolves once the server acknowledged it.
   */
  subscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    return subscribeResource(this.runtime, uri, options);
  }

  /** Modern era: the listen is issued again without the URI (no `resources/unsubscribe`). */
  unsubscribeResource(uri: string, options?: RequestOptions): Promise<void> {
    return unsubscribeResource(this.runtime, uri, options);
  }

  /** Every prompt, across pages. */
  listPrompts(options?: RequestOptions): Promise<ListPromptsResult> {
    return this.pages('prompts/list', 'prompts', ListPromptsResultSchema, options);
  }

  async getPrompt(name: string, args?: Record<string, string>, options?: RequestOptions): Promise<GetPromptResult> {
    const raw = await this.request('prompts/get', args === undefined ? { name } : { name, arguments: args }, options);
    return parseResult(GetPromptResultSchema, 'prompts/get', raw, this.name);
  }

  /** Completion values for a prompt argument or a resource template variable (`completion/complete`). */
  async complete(
    ref: CompletionReference,
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
    options?: RequestOptions,
  ): Promise<CompleteResult> {
    const params = context === undefined ? { ref, argument } : { ref, argument, context };
    const raw = await this.request('completion/complete', params, options);
    return parseResult(CompleteResultSchema, 'completion/complete', raw, this.name);
  }

  /**
   * The server's log threshold; kept for every later session (session-state.ts). In the modern
   * era nothing is sent: every later request carries it as `io.modelcontextprotocol/logLevel`.
   */
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<void> {
    return setLoggingLevel(this.runtime, level, options);
  }

  /**
   * Checks that the server answers. The 2026-07-28 era has no `ping`: there the check is a
   * `server/discover`, as the keepalive's (and a ping made before the era was known, refused
   * with -32601 by a modern server, is asked again that way).
   */
  async ping(options?: RequestOptions): Promise<void> {
    if (this.runtime.context.session()?.era === 'modern') return this.discover(options);
    try {
      parseResult(EmptyResultSchema, 'ping', await this.request('ping', undefined, options), this.name);
    } catch (error) {
      if (!(error instanceof McpError && error.rpcCode === -32601 && this.runtime.context.session()?.era === 'modern'))
        throw error;
      return this.discover(options);
    }
  }

  private async discover(options: RequestOptions | undefined): Promise<void> {
    await this.request('server/discover', undefined, options);
  }

  /**
   * The roots this client offers the server: they answer `roots/list` (in place of the `roots`
   * handler) on this and every later session, and the server is told with
   * `notifications/roots/list_changed` now, or on the next session if the connection is down.
   * Set before the first session, they are advertised without a handler; once a session is up
   * without the `roots` capability, a ConfigError says to give `handlers.roots` or set them earlier.
   */
  setRoots(roots: readonly Root[]): Promise<void> {
    return setRoots(this.runtime, roots);
  }

  /** Sends a notification; rejects when the connection is not serving. */
  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.runtime.notify(method, params);
  }

  on<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): () => void {
    return this.runtime.context.events.on(event, listener);
  }

  off<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): void {
    this.runtime.context.events.off(event, listener);
  }

  status(): ServerStatus {
    return serverStatus(this.runtime, this.owner.restartsOf(this.runtime.context.name));
  }

  /**
   * What the current session's handshake said: era, protocol version, server info, capabilities
   * and instructions (a copy); undefined while no session serves. The drop-in transports answer
   * the application's own `initialize` with it.
   */
  handshake(): ServerHandshake | undefined {
    return serverHandshake(this.runtime);
  }

  /**
   * A new transport and a new session now, whatever the state (a failed server too: its revival
   * backoff starts over). Resolves when the connection serves again, or went down once more.
   */
  reconnect(): Promise<void> {
    return this.owner.reconnectServer(this.runtime.context.name);
  }

  /** Ends this server's session (DELETE) and stops its connection; requests then fail fast. */
  close(): Promise<void> {
    return this.owner.closeServer(this.runtime.context.name);
  }

  private get tools(): ServerTools {
    return (this.toolState ??= new ServerTools(this.runtime, this.interceptors));
  }

  private pages<S extends z.ZodType<{ nextCursor?: string | undefined; [key: string]: unknown }>>(
    method: string,
    key: string,
    schema: S,
    options: RequestOptions | undefined,
  ): Promise<z.infer<S>> {
    return allPages((params) => this.request(method, params, options), method, key, schema, this.name);
  }
}

/**
 * The per-server facade users hold. It stays valid across re-initializations and restarts:
 * it talks to the server's runtime, never to a particular session or transport.
 */
import type { z } from 'zod';
import { ConfigError } from './errors.js';
import type { CallToolResult, Implementation, ListToolsResult } from './protocol/messages.js';
import { allPages } from './protocol/pagination.js';
import {
  CallToolResultSchema,
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  LOGGING_LEVELS,
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
} from './protocol/results.js';
import { subscribeResource, unsubscribeResource } from './runtime/listening/resource-subscriptions.js';
import type { Root } from './runtime/session/session-state.js';
import type { RejectedTool } from './runtime/requests/tool-headers.js';
import { InvalidToolDefinitionError } from './protocol/tool-header-errors.js';
import type { RequestOptions, RuntimeEvents, ServerRuntime, ConnectionState } from './runtime/server-runtime.js';
import type { TransportKind } from './transports/transport.js';
import type { AuthStatus } from './auth/types.js';
import { realTimers } from './transports/transport.js';
import { takesToolTasks, type TaskContext } from './tasks/context.js';
import { TaskClient } from './tasks/task-client.js';
import type { TaskHandle } from './tasks/task-handle.js';
import { isModernCreated } from './tasks/schemas.js';
import {
  awaitModernTask,
  callLegacyTool,
  callToolAsTask,
  type TaskCallOptions,
  type ToolCall,
} from './tasks/tool-call.js';
import { ToolTaskModes } from './tasks/tool-task-modes.js';

export interface ServerStatus {
  name: string;
  /** The connection machine's top-level state; `stopped` before start, `disabled` for a server loaded with `disabled: true`. */
  state: ConnectionState | 'stopped' | 'disabled';
  transport: TransportKind | undefined;
  protocolVersion: string | undefined;
  /** `modern` (2026-07-28, per-request `_meta`) or `legacy` (an `initialize` session); undefined until the first success. */
  era?: 'legacy' | 'modern' | undefined;
  serverInfo: Implementation | undefined;
  /** Never the id itself: '[redacted]' while a session exists. */
  sessionId: '[redacted]' | undefined;
  restarts: number;
  lastError: string | undefined;
  /** While `failed` and a revival is due: when the next attempt is (epoch ms). */
  nextAttemptAt?: number | undefined;
  keepalive: { lastRttMs: number | undefined; missed: number };
  /** Requests sent and awaiting an answer, and requests waiting for the connection. */
  requests: { inFlight: number; waiting: number };
  /** stdio servers: the child's pid while it runs (undefined for URL servers). */
  pid?: number | undefined;
  /** stdio servers: the most recent stderr lines of the current or last process (undefined for URL servers). */
  stderrTail?: string[] | undefined;
  /** Servers with `auth`: whether credentials are held, their scope and expiry; never a token. */
  auth?: AuthStatus | undefined;
}

export interface HandleOwner {
  restartsOf(server: string): number;
  closeServer(server: string): Promise<void>;
  reconnectServer(server: string): Promise<void>;
}

export class ServerHandle {
  /** Tasks: made by the first tool call or task method (an idle handle holds none). */
  private taskState: { context: TaskContext; modes: ToolTaskModes; client: TaskClient<CallToolResult> } | undefined;

  constructor(
    private readonly runtime: ServerRuntime,
    private readonly owner: HandleOwner,
  ) {}

  get name(): string {
    return this.runtime.name;
  }

  /** Any method; resolves with the result, rejects with McpError or another typed error. */
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: RequestOptions): Promise<T> {
    return this.runtime.request(method, params, options) as Promise<T>;
  }

  /**
   * Calls a tool. The result is checked (InvalidResultError on a malformed one) and, when the
   * tool declares an `outputSchema`, its `structuredContent` too (ToolOutputError naming the
   * path; `validateToolOutput: false` in the server's config turns this off).
   */
  callTool(name: string, args: Record<string, unknown> = {}, options?: RequestOptions): Promise<CallToolResult> {
    const schemas = this.runtime.outputSchemas;
    // Sent at once (held in the gate if need be) unless the tools list must be read again first.
    if (schemas?.isStale) {
      return schemas
        .ensureFresh(() => this.listTools(listOptions(options)))
        .then(() => this.sendToolCall(name, args, options));
    }
    return this.sendToolCall(name, args, options);
  }

  private async sendToolCall(
    name: string,
    args: Record<string, unknown>,
    options?: RequestOptions,
  ): Promise<CallToolResult> {
    // A tool the server runs as a task (required in 2025-11-25, the server's choice in 2026-07-28) is polled to its end.
    if (this.runtime.runsToolTasks) return callLegacyTool(this.toolCall(name, args, options));
    const send = () => this.request('tools/call', { name, arguments: args }, options);
    // Modern HTTP: a -32020 HeaderMismatch is answered by listing the tools once (tool-headers.ts).
    const raw = this.runtime.mirrorsToolHeaders
      ? await this.runtime.toolHeaders.withRecovery(name, send, () => this.listTools(listOptions(options)), this.name)
      : await send();
    if (isModernCreated(raw)) return awaitModernTask(this.toolCall(name, args, options), raw);
    return this.toolResult(name, raw);
  }

  /**
   * Calls a tool as a task and returns at once with its TaskHandle (`status()`, `result()`,
   * `cancel()`). 2025-11-25: asks for a task (`ttlMs` the lifetime wished); a tool whose
   * `execution.taskSupport` is forbidden, or a server without task support, is a ConfigError.
   * 2026-07-28: the server decides; a call it answered at once has no `taskId`.
   */
  callToolAsTask(
    name: string,
    args: Record<string, unknown> = {},
    options?: TaskCallOptions,
  ): Promise<TaskHandle<CallToolResult>> {
    return callToolAsTask(this.toolCall(name, args, options), options?.ttlMs);
  }

  /** Tasks by id: `get`, `result`, `open`, `cancel`, `list` (2025-11-25), `update` (2026-07-28). */
  get tasks(): TaskClient<CallToolResult> {
    return this.taskParts().client;
  }

  private toolCall(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions | undefined,
  ): ToolCall<CallToolResult> {
    const { context, modes } = this.taskParts();
    return {
      context,
      modes,
      name,
      args,
      options,
      listTools: (listing) => this.listTools(listing),
      finish: (raw) => this.toolResult(name, raw),
    };
  }

  private toolResult(name: string, raw: unknown): CallToolResult {
    const result = parseResult(CallToolResultSchema, 'tools/call', raw, this.name) as CallToolResult;
    result.content ??= [];
    this.runtime.outputSchemas?.check(name, result, this.name);
    return result;
  }

  private taskParts(): NonNullable<ServerHandle['taskState']> {
    if (this.taskState) return this.taskState;
    const runtime = this.runtime;
    const context: TaskContext = {
      server: runtime.name,
      timers: runtime.timers ?? realTimers,
      request: (method, params, options) => this.request(method, params, options),
      session: () => runtime.session(),
      onNotification: (listener) => this.on('notification', listener),
      onDown: (listener) => this.on('transition', ({ to }) => (to === 'closed' || to === 'failed') && listener()),
      answerInput: (method, params, handlerContext) => runtime.answerInput(method, params, handlerContext),
      maxInputRounds: runtime.maxInputRounds,
      watch: (taskId) => runtime.watchTask(taskId),
    };
    const modes = new ToolTaskModes();
    this.on('listChanged', ({ list }) => list === 'tools' && modes.invalidate());
    const client = new TaskClient(context, (raw) => this.toolResult('', raw));
    return (this.taskState = { context, modes, client });
  }

  /**
   * Every tool, following `nextCursor` across pages. On the modern Streamable HTTP wire, tools
   * whose `x-mcp-header` annotations break the spec are left out (a `warning` event names each).
   */
  async listTools(options?: RequestOptions): Promise<ListToolsResult> {
    const session = this.runtime.session();
    const listed = await this.pages('tools/list', 'tools', ListToolsResultSchema, options);
    const list = this.runtime.mirrorsToolHeaders
      ? this.runtime.toolHeaders.accept(listed, ({ tool, reason }) =>
          this.runtime.events.emit('warning', new InvalidToolDefinitionError(tool, reason, { server: this.name })),
        )
      : listed;
    this.learnTaskSupport(list, session);
    return list;
  }

  /** The tools the last `tools/list` left out (invalid `x-mcp-header` annotations), and why. */
  rejectedTools(): RejectedTool[] {
    return this.runtime.mirrorsToolHeaders ? this.runtime.toolHeaders.rejected() : [];
  }

  /** Which tools must run as tasks (2025-11-25), learned only from servers that run tools as tasks. */
  private learnTaskSupport(list: ListToolsResult, session: ReturnType<ServerRuntime['session']>): void {
    if (this.taskState || (session?.era === 'legacy' && takesToolTasks(session.capabilities)))
      this.taskParts().modes.learn(list, session, true);
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
    const params = args === undefined ? { name } : { name, arguments: args };
    return parseResult(
      GetPromptResultSchema,
      'prompts/get',
      await this.request('prompts/get', params, options),
      this.name,
    );
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
  async setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<void> {
    if (!(LOGGING_LEVELS as readonly unknown[]).includes(level)) {
      throw new ConfigError(`invalid logging level '${String(level)}': must be one of ${LOGGING_LEVELS.join(', ')}`, [
        { path: 'level', message: `must be one of ${LOGGING_LEVELS.join(', ')}` },
      ]);
    }
    const raw = await this.request('logging/setLevel', { level }, options);
    parseResult(EmptyResultSchema, 'logging/setLevel', raw, this.name);
    this.runtime.sessionState.levelSet(level);
  }

  async ping(options?: RequestOptions): Promise<void> {
    parseResult(EmptyResultSchema, 'ping', await this.request('ping', undefined, options), this.name);
  }

  /**
   * The roots this client offers the server: they answer `roots/list` (in place of the `roots`
   * handler) on this and every later session, and the server is told with
   * `notifications/roots/list_changed` now, or on the next session if the connection is down.
   * Set before the first session, they are advertised without a handler; once a session is up
   * without the `roots` capability, a ConfigError says to give `handlers.roots` or set them earlier.
   */
  async setRoots(roots: readonly Root[]): Promise<void> {
    const issues = roots.flatMap((root, index) =>
      typeof root?.uri === 'string' && root.uri.startsWith('file://')
        ? []
        : [{ path: `roots[${index}].uri`, message: 'must be a file:// URI' }],
    );
    if (issues.length > 0)
      throw new ConfigError(`invalid roots: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
    const runtime = this.runtime;
    const session = runtime.session();
    if (session && runtime.sessionState.roots === undefined && !runtime.advertisesRoots()) {
      throw new ConfigError(
        `[${this.name}] roots were not advertised on this session: give \`handlers.roots\`, or call setRoots before the server starts`,
        [{ path: 'handlers.roots', message: 'needed to change roots on a running session' }],
      );
    }
    const serving = runtime.gate.phase === 'open' && session !== undefined;
    runtime.sessionState.rootsSet(roots, serving);
    // 2026-07-28 removed the notification: a modern server asks for the roots when it needs them (`roots/list` input).
    if (serving && session.era !== 'modern') await this.notify('notifications/roots/list_changed');
  }

  private pages<S extends z.ZodType<{ nextCursor?: string | undefined; [key: string]: unknown }>>(
    method: string,
    key: string,
    schema: S,
    options: RequestOptions | undefined,
  ): Promise<z.infer<S>> {
    return allPages((params) => this.request(method, params, options), method, key, schema, this.name);
  }

  /** Sends a notification; rejects when the connection is not serving. */
  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.runtime.notify(method, params);
  }

  on<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): () => void {
    return this.runtime.events.on(event, listener);
  }

  off<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): void {
    this.runtime.events.off(event, listener);
  }

  status(): ServerStatus {
    const runtime = this.runtime;
    const session = runtime.session();
    const state = runtime.state();
    return {
      name: runtime.name,
      state,
      transport: runtime.transportKind,
      protocolVersion: session?.protocolVersion,
      era: session?.era,
      serverInfo: session?.serverInfo,
      sessionId: session && runtime.transport?.hasSession ? '[redacted]' : undefined,
      restarts: this.owner.restartsOf(runtime.name),
      lastError: runtime.lastError(),
      nextAttemptAt: state === 'failed' ? runtime.nextAttemptAt : undefined,
      keepalive: runtime.keepalive(),
      requests: { inFlight: Math.max(0, runtime.pending.size - runtime.gate.waiting), waiting: runtime.gate.waiting },
      pid: runtime.transport?.pid,
      stderrTail:
        runtime.config.kind === 'command'
          ? (runtime.transport?.stderrTail?.() ?? []).map((line) => runtime.redact(line))
          : undefined,
      auth: runtime.authorization.status(),
    };
  }

  /**
   * A new transport and a new session now, whatever the state (a failed server too: its revival
   * backoff starts over). Resolves when the connection serves again, or went down once more.
   */
  reconnect(): Promise<void> {
    return this.owner.reconnectServer(this.runtime.name);
  }

  /** Ends this server's session (DELETE) and stops its connection; requests then fail fast. */
  close(): Promise<void> {
    return this.owner.closeServer(this.runtime.name);
  }
}

/** The listing a call makes to refresh output schemas: the call's deadline and signal, not its progress. */
function listOptions(options: RequestOptions | undefined): RequestOptions | undefined {
  return options && { timeoutMs: options.timeoutMs, signal: options.signal };
}

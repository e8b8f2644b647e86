/**
 * One server's tools as its handle calls and lists them, in both eras:
 *
 * - a call lists the tools again first when their output schemas went stale (`list_changed`, a
 *   new session), so its result is checked against what the server says now (tool-result.ts);
 * - a 2025-11-25 server that runs tools as tasks: a tool that requires a task runs as one, and a
 *   2026-07-28 server that answers with a task is polled to its end (tasks/tool-call.ts);
 * - modern Streamable HTTP: a -32020 is answered by listing the tools once (runtime/requests/tool-headers.ts),
 *   and a list leaves out the tools whose `x-mcp-header` annotations break the spec.
 *
 * The task parts are built by the first call that needs them (tasks/tool-tasks.ts).
 */
import type { CallToolResult, ListToolsResult } from '../protocol/messages.js';
import { allPages } from '../protocol/pagination.js';
import { ListToolsResultSchema } from '../protocol/results.js';
import { InvalidToolDefinitionError } from '../protocol/tool-header-errors.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { RejectedTool } from '../runtime/requests/tool-headers.js';
import { takesToolTasks } from '../protocol/task-capabilities.js';
import { isModernCreated } from '../tasks/schemas.js';
import type { TaskClient } from '../tasks/task-client.js';
import { TaskHandle } from '../tasks/task-handle.js';
import {
  awaitModernTask,
  callLegacyTool,
  callToolAsTask,
  listingOptions,
  type TaskCallOptions,
  type ToolCall,
} from '../tasks/tool-call.js';
import { toolTasks, type ToolTasks } from '../tasks/tool-tasks.js';
import { interceptTaskCall } from './intercepted-task.js';
import { interceptToolCall, type ToolCall as InterceptedCall, type ToolCallInterceptor } from './interceptors.js';
import type { ToolHost } from './tool-host.js';
import { toolResult } from './tool-result.js';

export class ServerTools {
  private tasks: ToolTasks<CallToolResult> | undefined;

  constructor(
    private readonly host: ToolHost,
    /** Run around every call (interceptors.ts); undefined: none, the call goes straight on. */
    private readonly interceptors?: readonly ToolCallInterceptor[],
  ) {}

  /** `handle.callTool`: through the interceptors, if any, then to the server. */
  call(name: string, args: Record<string, unknown>, options: RequestOptions | undefined): Promise<CallToolResult> {
    const interceptors = this.interceptors;
    if (interceptors === undefined) return this.callServer(name, args, options);
    const call: InterceptedCall = { server: this.host.context.name, tool: name, arguments: args, options };
    return interceptToolCall(interceptors, call, (last) => this.callServer(last.tool, last.arguments, last.options));
  }

  /** Sent at once (held in the gate if need be), beside a listing of the tools when they changed. */
  private callServer(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions | undefined,
  ): Promise<CallToolResult> {
    const schemas = this.host.context.outputSchemas;
    // Listed beside the call, not before it: both are due by the call's own timeout (a listing
    // first would add its wait to the call's), and the result is checked once the list is in.
    if (schemas?.isStale)
      return this.send(
        name,
        args,
        options,
        schemas.ensureFresh(() => this.list(listingOptions(options))),
      );
    return this.send(name, args, options);
  }

  private async send(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions | undefined,
    /** The listing that makes the output schemas fresh, when one runs beside the call (it never rejects). */
    listed?: Promise<void>,
  ): Promise<CallToolResult> {
    const host = this.host;
    // A tool the server runs as a task (required in 2025-11-25, the server's choice in 2026-07-28) is polled to its end.
    if (host.context.facts?.runsToolTasks) {
      if (listed) await listed;
      return callLegacyTool(this.toolCall(name, args, options));
    }
    // Modern HTTP: a -32020 HeaderMismatch is answered by listing the tools once (tool-headers.ts).
    // Elsewhere the call goes straight to the runtime (no closure per call).
    const raw = host.requests.mirrorsToolHeaders
      ? await this.withHeaderRecovery(name, args, options)
      : await host.request('tools/call', { name, arguments: args }, options);
    if (listed) await listed; // no await on the hot path (no listing): one tick less per call
    if (isModernCreated(raw)) return awaitModernTask(this.toolCall(name, args, options), raw);
    return toolResult(host.context, name, raw);
  }

  /** The call, sent once more after one listing when a -32020 is explained by changed declarations. */
  private withHeaderRecovery(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions | undefined,
  ): Promise<unknown> {
    const host = this.host;
    const send = () => host.request('tools/call', { name, arguments: args }, options);
    return host.requests.toolHeaders.withRecovery(
      name,
      send,
      () => this.list(listingOptions(options)),
      host.context.name,
    );
  }

  /** `handle.callToolAsTask`: the call as a task, when the era and the tool allow one (tasks/tool-call.ts). */
  callAsTask(
    name: string,
    args: Record<string, unknown>,
    options: TaskCallOptions | undefined,
  ): Promise<TaskHandle<CallToolResult>> {
    const interceptors = this.interceptors;
    if (interceptors === undefined) return callToolAsTask(this.toolCall(name, args, options), options?.ttlMs);
    const call: InterceptedCall = { server: this.host.context.name, tool: name, arguments: args, options };
    return interceptTaskCall(
      interceptors,
      call,
      (last) => {
        const taskOptions: TaskCallOptions | undefined = last.options;
        return callToolAsTask(this.toolCall(last.tool, last.arguments, taskOptions), taskOptions?.ttlMs);
      },
      // A result an interceptor gave (a cache): no task, and not checked against the output schema.
      (result) =>
        new TaskHandle(
          this.taskParts().context,
          this.host.context.session()?.era ?? 'modern',
          { answeredAtOnce: result },
          () => result,
        ),
    );
  }

  /** `handle.tasks`: the task methods by task id. */
  get taskClient(): TaskClient<CallToolResult> {
    return this.taskParts().client;
  }

  /** `handle.listTools`: every page; the session's task modes are learned from it. */
  async list(options: RequestOptions | undefined): Promise<ListToolsResult> {
    const host = this.host;
    const session = host.context.session();
    const request = (params: Record<string, unknown> | undefined) => host.request('tools/list', params, options);
    const listed = await allPages(request, 'tools/list', 'tools', ListToolsResultSchema, host.context.name);
    const list = host.requests.mirrorsToolHeaders
      ? host.requests.toolHeaders.accept(listed, ({ tool, reason }) =>
          host.context.events.emit(
            'warning',
            new InvalidToolDefinitionError(tool, reason, { server: host.context.name }),
          ),
        )
      : listed;
    // Which tools must run as tasks (2025-11-25), learned only from servers that run tools as tasks.
    if (this.tasks || (session?.era === 'legacy' && takesToolTasks(session.capabilities)))
      this.taskParts().modes.learn(list, session, true);
    return list;
  }

  /** The tools the last `tools/list` left out (invalid `x-mcp-header` annotations), and why. */
  rejected(): RejectedTool[] {
    return this.host.requests.mirrorsToolHeaders ? this.host.requests.toolHeaders.rejected() : [];
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
      listTools: (listing) => this.list(listing),
      finish: (raw) => toolResult(this.host.context, name, raw),
    };
  }

  private taskParts(): ToolTasks<CallToolResult> {
    return (this.tasks ??= toolTasks(
      this.host,
      (raw) => toolResult(this.host.context, '', raw),
      (tool) => (raw) => toolResult(this.host.context, tool, raw),
    ));
  }
}

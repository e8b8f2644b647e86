/**
 * Call interceptors: functions run around every tool call (`handle.callTool`, the catalog, every
 * adapter, the drop-in transports' `tools/call`, `callToolAsTask`: intercepted-task.ts). Each
 * gets the call (server, tool, arguments, options) and `next`, and composes like middleware, the
 * first one outermost:
 *
 * - approve or deny: throw (ToolCallDeniedError names server and tool), or call `next()`;
 * - rewrite: `next({ arguments })` (or `options`) sends the call with those instead;
 * - short-circuit: return a result without calling `next` (a cache);
 * - observe: `await next()` is the outcome, its result or its error, after the time it took.
 *
 * Without interceptors nothing here runs: the call goes straight to the server (no closure, no
 * promise hop).
 */
import { McpSupervisorError } from '../core/errors.js';
import type { CallToolResult } from '../protocol/messages.js';
import type { RequestOptions } from '../runtime/context/events.js';

/** One tool call as an interceptor sees it. */
export interface ToolCall {
  /** The server's name (as configured; `connect()`'s `name`, else the URL's host). */
  readonly server: string;
  /** The tool's name on its server (the catalog's exposed name may carry a prefix). */
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The call's options (timeout, signal, progress, retry); undefined when none were given. */
  readonly options: RequestOptions | undefined;
}

/** What `next` may change of the call; what is left out stays as it was. */
export interface ToolCallChanges {
  arguments?: Record<string, unknown>;
  options?: RequestOptions | undefined;
}

/** Sends the call on (to the next interceptor, then the server) and resolves with its outcome. */
export type NextToolCall = (changes?: ToolCallChanges) => Promise<CallToolResult>;

/**
 * Runs around a tool call: return `next()`'s result (or a result of its own), throw to refuse.
 * May be async; called once per call, `next` at most once is the usual, more than once is a retry.
 */
export type ToolCallInterceptor = (call: ToolCall, next: NextToolCall) => CallToolResult | Promise<CallToolResult>;

/** An interceptor refused the call (a human said no, a policy forbids it); the server never saw it. */
export class ToolCallDeniedError extends McpSupervisorError {
  readonly code = 'TOOL_CALL_DENIED' as const;
  readonly retryable = false;
  readonly toolName: string;
  constructor(
    call: Pick<ToolCall, 'server' | 'tool'>,
    readonly reason = 'denied by an interceptor',
  ) {
    super(`call of tool '${call.tool}' denied: ${reason}`, { server: call.server });
    this.toolName = call.tool;
  }
}

/** The configured list, or undefined when there is none (the call then takes the direct path). */
export function interceptorList(
  interceptors: readonly ToolCallInterceptor[] | undefined,
): readonly ToolCallInterceptor[] | undefined {
  return interceptors !== undefined && interceptors.length > 0 ? interceptors : undefined;
}

/** The call through every interceptor, `send` last (the server). */
export function interceptToolCall(
  interceptors: readonly ToolCallInterceptor[],
  call: ToolCall,
  send: (call: ToolCall) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const step = (index: number, current: ToolCall): Promise<CallToolResult> => {
    const interceptor = interceptors[index];
    if (!interceptor) return send(current);
    const next: NextToolCall = (changes) => step(index + 1, changed(current, changes));
    // A synchronous throw rejects the call like an asynchronous one.
    return new Promise<CallToolResult>((resolve) => resolve(interceptor(current, next)));
  };
  return step(0, Object.freeze({ ...call }));
}

function changed(call: ToolCall, changes: ToolCallChanges | undefined): ToolCall {
  if (!changes) return call;
  return Object.freeze({
    server: call.server,
    tool: call.tool,
    arguments: changes.arguments ?? call.arguments,
    options: 'options' in changes ? changes.options : call.options,
  });
}

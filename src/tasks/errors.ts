/** Typed errors of tasks: a task the server no longer knows, a task that ended cancelled. */
import { McpError, McpSupervisorError, type ErrorDetails } from '../core/errors.js';

/**
 * The server does not know the task (`-32602` on `tasks/get` or `tasks/result`): it expired
 * (its `ttl`), or the server lost it (a restart without durable task storage). An McpError, so
 * `rpcCode` still reads -32602.
 */
export class TaskNotFoundError extends McpError {
  constructor(
    readonly taskId: string,
    rpcMessage: string,
    data: unknown,
    details?: ErrorDetails,
  ) {
    super(-32602, rpcMessage, data, details);
    this.message = `${details?.server ? `[${details.server}] ` : ''}task ${taskId} is unknown to the server (expired, or lost in a restart): ${rpcMessage}`;
  }
}

/** The task ended `cancelled` (by `cancel()`, another client, or the server): there is no result. */
export class TaskCancelledError extends McpSupervisorError {
  readonly code = 'TASK_CANCELLED' as const;
  readonly retryable = false;
  constructor(
    readonly taskId: string,
    statusMessage: string | undefined,
    details?: ErrorDetails,
  ) {
    super(`task ${taskId} was cancelled${statusMessage ? `: ${statusMessage}` : ''}`, details);
  }
}

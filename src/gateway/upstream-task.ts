/**
 * A host's tool call made as a task on its upstream server, in either era: a 2025-11-25 tool that
 * allows tasks (`execution.taskSupport`) is called with `task`, and a 2026-07-28 server with the
 * tasks extension decides itself (it may answer at once). The hosts' side of it, per era:
 * host-tasks.ts (2025-11-25) and modern-tasks.ts (2026-07-28).
 */
import { ConfigError } from '../core/errors.js';
import type { CatalogTool } from '../catalog/types.js';
import type { CallToolResult } from '../protocol/messages.js';
import { TASKS_EXTENSION } from '../protocol/task-capabilities.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { ServerHandle } from '../handle/server-handle.js';
import type { TaskInfo } from '../tasks/schemas.js';
import { isReady, untilServing } from './serving.js';

/**
 * Whether the upstream may run the tool as a task, from what is known without a request: a
 * 2025-11-25 tool that allows tasks, or a 2026-07-28 server with the tasks extension; a server
 * with no session now may be either (upstreamTask decides once it serves).
 */
export function mayRunAsTask(handle: ServerHandle, tool: CatalogTool): boolean {
  const support = taskSupport(tool);
  if (support === 'optional' || support === 'required') return true;
  const handshake = handle.handshake();
  if (handshake === undefined) return true;
  const extensions = handshake.capabilities['extensions'] as Record<string, unknown> | undefined;
  return handshake.era === 'modern' && extensions?.[TASKS_EXTENSION] !== undefined;
}

function taskSupport(tool: CatalogTool): string | undefined {
  return (tool.definition.execution as { taskSupport?: string } | undefined)?.taskSupport;
}

/**
 * The call as an upstream task: the task created, the result when the server answered at once
 * (a 2026-07-28 server decides), or undefined when the upstream cannot run the tool as a task (a
 * 2025-11-25 tool that does not allow it, a server without tasks).
 */
export async function upstreamTask(
  handle: ServerHandle,
  tool: CatalogTool,
  args: Record<string, unknown>,
  ttl: number | undefined,
  holdMs: number,
  options: RequestOptions,
): Promise<{ created: TaskInfo } | { result: CallToolResult } | undefined> {
  if (!mayRunAsTask(handle, tool)) return undefined;
  if (!isReady(handle)) await untilServing(handle, holdMs, options.signal);
  const support = taskSupport(tool);
  const modern = handle.handshake()?.era === 'modern';
  if (!modern && support !== 'optional' && support !== 'required') return undefined;
  const extensions = handle.handshake()?.capabilities['extensions'] as Record<string, unknown> | undefined;
  if (modern && extensions?.[TASKS_EXTENSION] === undefined) return undefined;
  try {
    const task = await handle.callToolAsTask(tool.originalName, args, {
      ...options,
      ...(ttl === undefined ? {} : { ttlMs: ttl }),
    });
    const created = task.lastStatus;
    // A 2026-07-28 server may answer at once: that answer is the call's (never a second call).
    return created === undefined ? { result: await task.result() } : { created };
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}

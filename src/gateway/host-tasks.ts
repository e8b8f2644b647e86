/**
 * Tasks passed through to a 2025-11-25 host: a task-augmented `tools/call` starts the task on the
 * upstream server (`handle.callToolAsTask`) and the host's `tasks/get`, `tasks/result`,
 * `tasks/cancel` and `tasks/list` are answered from it. The host's task id names the server and
 * the server's own id (`<server>/<id>`), so no table is kept and a task outlives the session.
 */
import { z } from 'zod';
import { ProtocolError, Server, type ServerContext } from '@modelcontextprotocol/server';
import { ConfigError } from '../core/errors.js';
import type { CallToolResult } from '../protocol/messages.js';
import type { ServerHandle } from '../server-handle.js';
import type { TaskInfo } from '../tasks/schemas.js';
import type { CatalogTool } from '../catalog/types.js';
import { forwarded, untilServing } from './serving.js';
import type { Surface } from './surface.js';

/** The downstream capability: what the handlers below serve (2025-11-25 shape). */
export const HOST_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/**
 * The SDK's `Server`, letting a `tools/call` handler answer with a task: its tools/call result
 * check knows no `CreateTaskResult` (the SDK no longer creates 2025 tasks itself), so the task
 * leaves the checked handler as a thrown value and is returned past the check.
 */
export class TaskPassingServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (isCreated(result)) throw new TaskCreated(result);
      return result;
    });
    return async (request, ctx) => {
      try {
        return await checked(request, ctx);
      } catch (thrown) {
        if (thrown instanceof TaskCreated) return thrown.result;
        throw thrown;
      }
    };
  }
}

/** Carries the created task past the SDK's result check; never leaves this module. */
class TaskCreated extends Error {
  constructor(readonly result: { task: LegacyTask }) {
    super('task created');
  }
}

function isCreated(result: unknown): result is { task: LegacyTask } {
  return typeof result === 'object' && result !== null && 'task' in result && !('content' in result);
}

/** A 2025-11-25 Task as the host reads it. */
interface LegacyTask {
  taskId: string;
  status: TaskInfo['status'];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

/**
 * The host asked for a task: the upstream task's `{ task }`, the result when the server answered
 * at once, or undefined when the upstream cannot run this tool as a task (the caller then makes
 * the plain call).
 */
export async function startHostTask(
  handle: ServerHandle,
  tool: CatalogTool,
  args: Record<string, unknown>,
  ttl: number | undefined,
  holdMs: number,
  ctx: ServerContext,
): Promise<{ task: LegacyTask } | CallToolResult | undefined> {
  const support = (tool.definition.execution as { taskSupport?: string } | undefined)?.taskSupport;
  if (support !== 'optional' && support !== 'required') return undefined;
  if (handle.status().state !== 'ready') await untilServing(handle, holdMs, ctx.mcpReq.signal);
  try {
    const task = await handle.callToolAsTask(tool.originalName, args, {
      signal: ctx.mcpReq.signal,
      ...(ttl === undefined ? {} : { ttlMs: ttl }),
    });
    const created = task.lastStatus;
    // A 2026-07-28 server may answer at once: that answer is the call's (never a second call).
    return created === undefined ? await task.result() : { task: legacyTask(tool.server, created) };
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}

/** `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list` on the downstream server. */
export function serveHostTasks(server: Server, surface: Surface): void {
  server.setRequestHandler('tasks/get', { params: BY_ID }, async (params) => {
    const { handle, name, taskId } = owner(surface, params.taskId);
    return { ...legacyTask(name, await forwarded(name, () => handle.tasks.get(taskId))) };
  });
  server.setRequestHandler('tasks/result', { params: BY_ID }, async (params, ctx) => {
    const { handle, name, taskId } = owner(surface, params.taskId);
    const result: CallToolResult = await forwarded(name, () =>
      handle.tasks.result(taskId, { signal: ctx.mcpReq.signal }),
    );
    return {
      ...result,
      _meta: { ...(result._meta as Record<string, unknown> | undefined), [RELATED_TASK]: { taskId: params.taskId } },
    };
  });
  server.setRequestHandler('tasks/cancel', { params: BY_ID }, async (params) => {
    const { handle, name, taskId } = owner(surface, params.taskId);
    const cancelled = await forwarded(name, () => handle.tasks.cancel(taskId));
    return { ...legacyTask(name, cancelled ?? (await forwarded(name, () => handle.tasks.get(taskId)))) };
  });
  server.setRequestHandler('tasks/list', { params: LIST }, async () => {
    const offering = surface.handles().filter((handle) => {
      const tasks = handle.handshake()?.capabilities['tasks'] as { list?: unknown } | undefined;
      return tasks?.list !== undefined;
    });
    const listed = await Promise.allSettled(offering.map((handle) => handle.tasks.list()));
    const tasks: LegacyTask[] = [];
    listed.forEach((result, index) => {
      if (result.status === 'fulfilled')
        for (const task of result.value.tasks) tasks.push(legacyTask(offering[index]!.name, task));
    });
    return { tasks };
  });
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const BY_ID = z.looseObject({ taskId: z.string() });
const LIST = z.looseObject({ cursor: z.string().optional() }).optional();

function legacyTask(server: string, task: TaskInfo): LegacyTask {
  return {
    taskId: `${encodeURIComponent(server)}/${task.taskId}`,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt ?? task.createdAt,
    ttl: task.ttlMs,
    ...(task.pollIntervalMs === undefined ? {} : { pollInterval: task.pollIntervalMs }),
  };
}

/** The server and its own task id, from the host's task id; an id no server owns is -32602. */
function owner(surface: Surface, hostTaskId: string): { handle: ServerHandle; name: string; taskId: string } {
  const slash = hostTaskId.indexOf('/');
  let name: string | undefined;
  try {
    name = slash > 0 ? decodeURIComponent(hostTaskId.slice(0, slash)) : undefined;
  } catch {
    name = undefined;
  }
  const handle = name === undefined ? undefined : surface.handle(name);
  if (!handle || name === undefined) throw new ProtocolError(-32602, `Task not found: ${hostTaskId}`);
  return { handle, name, taskId: hostTaskId.slice(slash + 1) };
}

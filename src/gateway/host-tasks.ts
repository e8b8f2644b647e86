/**
 * Tasks passed through to a 2025-11-25 host: a task-augmented `tools/call` starts the task on the
 * upstream server (`handle.callToolAsTask`) and the host's `tasks/get`, `tasks/result`,
 * `tasks/cancel` and `tasks/list` are answered from it. The host's task id names the server and
 * the server's own id (`<server>/<id>`), so no table is kept and a task outlives the session.
 */
import { z } from 'zod';
import { ProtocolError, Server, type ServerContext } from '@modelcontextprotocol/server';
import type { CallToolResult } from '../protocol/messages.js';
import type { ServerHandle } from '../handle/server-handle.js';
import type { TaskInfo } from '../tasks/schemas.js';
import type { CatalogTool } from '../catalog/types.js';
import type { LegacyTaskInputs } from './legacy-task-input.js';
import { cancelTask, readTask, updateTask } from './modern-tasks.js';
import { forwarded } from './serving.js';
import { upstreamTask } from './upstream-task.js';
import type { Surface } from './surface.js';

/** The downstream capability: what the handlers below serve (2025-11-25 shape). */
export const HOST_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

/**
 * The SDK's `Server`, letting a `tools/call` handler answer with a task: its tools/call result
 * check knows no `CreateTaskResult` (the SDK no longer creates 2025 tasks itself), so the task
 * leaves the checked handler as a thrown value and is returned past the check (2026-07-28: the
 * extension's `CreateTaskResult`, which the SDK does not know either).
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
  constructor(readonly result: Record<string, unknown>) {
    super('task created');
  }
}

function isCreated(result: unknown): result is Record<string, unknown> {
  if (typeof result !== 'object' || result === null || 'content' in result) return false;
  // 2025-11-25: `{ task }`; 2026-07-28: the task itself, `resultType: 'task'` (modern-tasks.ts).
  return 'task' in result || (result as { resultType?: unknown }).resultType === 'task';
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
  const started = await upstreamTask(handle, tool, args, ttl, holdMs, { signal: ctx.mcpReq.signal });
  if (started && 'created' in started) return { task: legacyTask(tool.server, started.created) };
  return started?.result;
}

/**
 * `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list` on the downstream server; a
 * 2026-07-28 host's `tasks/get`, `tasks/update` and `tasks/cancel` are the extension's
 * (modern-tasks.ts), and the extension has no `tasks/result` or `tasks/list`.
 */
export function serveHostTasks(server: Server, surface: Surface, holdMs: number, inputs: LegacyTaskInputs): void {
  server.setRequestHandler('tasks/get', { params: BY_ID }, async (params, ctx) => {
    const { handle, name, taskId } = owner(surface, params.taskId);
    if (isModern(ctx)) return { ...(await readTask(handle, name, taskId, holdMs, inputs, ctx.mcpReq.signal)) };
    return { ...legacyTask(name, await forwarded(name, () => handle.tasks.get(taskId))) };
  });
  server.setRequestHandler('tasks/update', { params: UPDATE }, async (params, ctx) => {
    if (!isModern(ctx)) throw new ProtocolError(-32601, 'Method not found: tasks/update (2026-07-28 tasks only)');
    const { handle, name, taskId } = owner(surface, params.taskId);
    // The SDK lifts a 2026-07-28 request's `inputResponses` out of its params, as for an input round.
    const responses = params.inputResponses ?? ctx.mcpReq.inputResponses;
    if (responses === undefined)
      throw new ProtocolError(-32602, 'Invalid params for tasks/update: inputResponses is required');
    return await updateTask(handle, name, taskId, responses, holdMs, inputs, ctx.mcpReq.signal);
  });
  server.setRequestHandler('tasks/result', { params: BY_ID }, async (params, ctx) => {
    if (isModern(ctx)) throw notInExtension('tasks/result');
    const { handle, name, taskId } = owner(surface, params.taskId);
    const result: CallToolResult = await forwarded(name, () =>
      handle.tasks.result(taskId, { signal: ctx.mcpReq.signal }),
    );
    return {
      ...result,
      _meta: { ...(result._meta as Record<string, unknown> | undefined), [RELATED_TASK]: { taskId: params.taskId } },
    };
  });
  server.setRequestHandler('tasks/cancel', { params: BY_ID }, async (params, ctx) => {
    const { handle, name, taskId } = owner(surface, params.taskId);
    if (isModern(ctx)) return await cancelTask(handle, name, taskId, holdMs, ctx.mcpReq.signal);
    const cancelled = await forwarded(name, () => handle.tasks.cancel(taskId));
    return { ...legacyTask(name, cancelled ?? (await forwarded(name, () => handle.tasks.get(taskId)))) };
  });
  server.setRequestHandler('tasks/list', { params: LIST }, async (_params, ctx) => {
    if (isModern(ctx)) throw notInExtension('tasks/list');
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

/** A request of a 2026-07-28 host (it carries the per-request envelope). */
function isModern(ctx: ServerContext): boolean {
  return ctx.mcpReq.envelope !== undefined;
}

function notInExtension(method: string): ProtocolError {
  return new ProtocolError(-32601, `Method not found: ${method} is not part of the 2026-07-28 tasks extension`);
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const BY_ID = z.looseObject({ taskId: z.string() });
const UPDATE = z.looseObject({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() });
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
export function owner(surface: Surface, hostTaskId: string): { handle: ServerHandle; name: string; taskId: string } {
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

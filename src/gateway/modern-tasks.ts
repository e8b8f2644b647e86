/**
 * Tasks for a 2026-07-28 host (the `io.modelcontextprotocol/tasks` extension, SEP-2663). The
 * gateway is the server the host talks to, so it decides when a call becomes a task: when the
 * host declared the extension on the request and the upstream runs the call as a task (a
 * 2026-07-28 server that answered with one, a 2025-11-25 tool whose `taskSupport` is `optional`
 * or `required`). The host's task id is `<server>/<the server's id>` in both eras (host-tasks.ts),
 * so no table is kept; `tasks/get`, `tasks/update` and `tasks/cancel` are answered from the
 * upstream task, with the result, error or input requests inline as the extension says.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { McpError } from '../core/errors.js';
import type { CallToolResult } from '../protocol/messages.js';
import { TASKS_EXTENSION } from '../protocol/task-capabilities.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { ServerHandle } from '../handle/server-handle.js';
import { TaskNotFoundError } from '../tasks/errors.js';
import type { TaskInfo } from '../tasks/schemas.js';
import type { CatalogTool } from '../catalog/types.js';
import type { LegacyTaskInputs } from './legacy-task-input.js';
import { upstreamTask } from './upstream-task.js';
import { failureText, isReady, ServerUnavailableError, untilServing, upstreamRpcError } from './serving.js';

/** A task as a 2026-07-28 host reads it (`DetailedTask`): the host's id, the payload of its status inline. */
export interface ModernTask {
  taskId: string;
  status: TaskInfo['status'];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, unknown>;
}

/** The host declared the tasks extension on this request: it may be answered with a task. */
export function hostTakesTasks(capabilities: unknown): boolean {
  const extensions = (capabilities as { extensions?: unknown } | undefined)?.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * The call of a host that takes tasks, made as an upstream task: a `CreateTaskResult`
 * (`resultType: 'task'`), the call's result when the upstream answered at once, or undefined
 * when the upstream cannot run the tool as a task (the caller then makes the plain call).
 */
export async function startTask(
  handle: ServerHandle,
  tool: CatalogTool,
  args: Record<string, unknown>,
  holdMs: number,
  options: RequestOptions,
): Promise<CallToolResult | CreatedTask | undefined> {
  const started = await upstreamTask(handle, tool, args, undefined, holdMs, options);
  if (started && 'created' in started) return { resultType: 'task', ...modernTask(tool.server, started.created) };
  return started?.result;
}

/** The extension's `CreateTaskResult`: the task itself, discriminated by `resultType`. */
export type CreatedTask = ModernTask & { resultType: 'task' };

/**
 * `tasks/get` for a 2026-07-28 host: the upstream task now, its payload inline. A 2025-11-25
 * upstream's outcome is read from its `tasks/result` once the task has ended. A task the server no
 * longer knows (expired, or lost in a restart) is -32602 naming the server; a server that is not
 * serving within the hold time is -32603 naming it and why.
 */
export async function readTask(
  handle: ServerHandle,
  server: string,
  taskId: string,
  holdMs: number,
  inputs: LegacyTaskInputs,
  signal?: AbortSignal,
): Promise<ModernTask> {
  return hostFacing(server, taskId, async () => {
    await serving(handle, holdMs, signal);
    const task = await handle.tasks.get(taskId, { signal });
    if (handle.handshake()?.era !== 'legacy') return modernTask(server, task);
    // A 2025-11-25 task waiting for input: its questions, read from its tasks/result (legacy-task-input.ts).
    const asked = task.status === 'input_required' ? inputs.questions(handle, server, task.taskId) : undefined;
    const read = await withLegacyOutcome(handle, task, signal);
    return modernTask(server, asked ? { ...read, inputRequests: asked } : read);
  });
}

/**
 * `tasks/update`: the host's answers to the task's input requests, passed on — to a 2026-07-28
 * server as `tasks/update`, to a 2025-11-25 server as the answers to its requests (legacy-task-input.ts).
 */
export async function updateTask(
  handle: ServerHandle,
  server: string,
  taskId: string,
  inputResponses: Record<string, unknown>,
  holdMs: number,
  inputs: LegacyTaskInputs,
  signal?: AbortSignal,
): Promise<Record<string, never>> {
  return hostFacing(server, taskId, async () => {
    await serving(handle, holdMs, signal);
    if (handle.handshake()?.era !== 'legacy') await handle.tasks.update(taskId, inputResponses, { signal });
    else inputs.answer(server, taskId, inputResponses);
    return {};
  });
}

/** `tasks/cancel`: passed on; the extension only acknowledges (cancelling is cooperative). */
export async function cancelTask(
  handle: ServerHandle,
  server: string,
  taskId: string,
  holdMs: number,
  signal?: AbortSignal,
): Promise<Record<string, never>> {
  return hostFacing(server, taskId, async () => {
    await serving(handle, holdMs, signal);
    await handle.tasks.cancel(taskId, { signal });
    return {};
  });
}

/** A task in the host's shape: its id names the server, a 2025-11-25 task's fields renamed. */
export function modernTask(server: string, task: TaskInfo): ModernTask {
  // A 2025-11-25 task waiting for input whose question has not come yet (on its tasks/result stream): working.
  const waitsUnseen = task.status === 'input_required' && task.inputRequests === undefined;
  return {
    taskId: `${encodeURIComponent(server)}/${task.taskId}`,
    status: waitsUnseen ? 'working' : task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt ?? task.createdAt,
    ttlMs: task.ttlMs,
    ...(task.pollIntervalMs === undefined ? {} : { pollIntervalMs: task.pollIntervalMs }),
    ...(task.result === undefined ? {} : { result: task.result }),
    ...(task.error === undefined ? {} : { error: task.error }),
    ...(task.inputRequests === undefined || waitsUnseen ? {} : { inputRequests: task.inputRequests }),
  };
}

/** A task the server no longer knows: why, naming the server and the host's task id. */
function lostTask(server: string, hostTaskId: string, error: TaskNotFoundError): ProtocolError {
  return new ProtocolError(
    -32602,
    `server '${server}' no longer knows task ${hostTaskId} (expired, or lost in a restart)`,
    {
      server,
      reason: 'task_lost',
      upstream: error.rpcMessage,
    },
  );
}

/** The ended 2025-11-25 task with its outcome (tasks/result) inline: a result, or the JSON-RPC error. */
async function withLegacyOutcome(handle: ServerHandle, task: TaskInfo, signal?: AbortSignal): Promise<TaskInfo> {
  if (task.status !== 'completed' && task.status !== 'failed') return task;
  try {
    const result = await handle.tasks.result(task.taskId, { signal });
    return { ...task, result: result as unknown as Record<string, unknown> };
  } catch (error) {
    if (!(error instanceof McpError) || error instanceof TaskNotFoundError) throw error;
    return { ...task, error: { code: error.rpcCode, message: error.rpcMessage, data: error.data } };
  }
}

async function serving(handle: ServerHandle, holdMs: number, signal: AbortSignal | undefined): Promise<void> {
  if (!isReady(handle)) await untilServing(handle, holdMs, signal);
}

/** Errors as the host reads them: a lost task named, the server's own errors passed through, the rest naming the server. */
async function hostFacing<T>(server: string, taskId: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof TaskNotFoundError) throw lostTask(server, `${encodeURIComponent(server)}/${taskId}`, error);
    if (error instanceof ServerUnavailableError)
      throw new ProtocolError(-32603, error.message, { server, reason: 'unavailable' });
    if (error instanceof ProtocolError) throw error;
    const rpc = upstreamRpcError(error);
    if (rpc) throw new ProtocolError(rpc.code, rpc.message, rpc.data);
    throw new ProtocolError(-32603, failureText(server, error), { server });
  }
}

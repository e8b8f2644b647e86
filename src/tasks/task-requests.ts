/**
 * The task methods on the wire, one function each, for either era. Reads are sent with
 * `retry: 'always'`: asking a task's status or result again is harmless, so a broken connection
 * never turns a poll into an OutcomeUnknownError.
 */
import { McpError } from '../core/errors.js';
import { EmptyResultSchema, parseResult } from '../protocol/results.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { TaskContext } from './context.js';
import { TaskNotFoundError } from './errors.js';
import { parseLegacyList, parseTask, type TaskInfo } from './schemas.js';
import type { Era } from '../../machines/connection.types.js';

export function readOptions(options: RequestOptions | undefined): RequestOptions {
  return { timeoutMs: options?.timeoutMs, signal: options?.signal, retry: 'always' };
}

/** `tasks/get`: the task now (2026-07-28: with its result, error or input requests inline). */
export async function getTask(
  context: TaskContext,
  era: Era,
  taskId: string,
  options?: RequestOptions,
): Promise<TaskInfo> {
  const raw = await known(taskId, context, context.request('tasks/get', { taskId }, readOptions(options)));
  return parseTask(era, 'tasks/get', raw, context.server);
}

/** 2025-11-25 `tasks/result`: the request's own outcome (blocks on the server until the task ends). */
export function legacyTaskResult(context: TaskContext, taskId: string, options?: RequestOptions): Promise<unknown> {
  return known(taskId, context, context.request('tasks/result', { taskId }, readOptions(options)));
}

/**
 * `tasks/cancel`. 2025-11-25 answers the task (now `cancelled`); 2026-07-28 only acknowledges
 * (cancelling is cooperative there): undefined.
 */
export async function cancelTask(
  context: TaskContext,
  era: Era,
  taskId: string,
  options?: RequestOptions,
): Promise<TaskInfo | undefined> {
  const raw = await context.request('tasks/cancel', { taskId }, options);
  if (era === 'legacy') return parseTask(era, 'tasks/cancel', raw, context.server);
  parseResult(EmptyResultSchema, 'tasks/cancel', raw, context.server);
  return undefined;
}

/** 2026-07-28 `tasks/update`: answers to the task's `inputRequests`, by key. */
export async function updateTask(
  context: TaskContext,
  taskId: string,
  inputResponses: Record<string, unknown>,
  options?: RequestOptions,
): Promise<void> {
  const raw = await context.request('tasks/update', { taskId, inputResponses }, options);
  parseResult(EmptyResultSchema, 'tasks/update', raw, context.server);
}

/** 2025-11-25 `tasks/list`, every page (at most 100, like the other lists). */
export async function listTasks(context: TaskContext, options?: RequestOptions): Promise<{ tasks: TaskInfo[] }> {
  const tasks: TaskInfo[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const params = cursor === undefined ? {} : { cursor };
    const list = parseLegacyList(await context.request('tasks/list', params, readOptions(options)), context.server);
    tasks.push(...list.tasks);
    if (list.nextCursor === undefined || seen.has(list.nextCursor)) break;
    seen.add(list.nextCursor);
    cursor = list.nextCursor;
  }
  return { tasks };
}

/** `-32602` on a task read means the server does not know the task (any more). */
async function known<T>(taskId: string, context: TaskContext, sent: Promise<T>): Promise<T> {
  try {
    return await sent;
  } catch (error) {
    if (error instanceof McpError && error.rpcCode === -32602)
      throw new TaskNotFoundError(taskId, error.rpcMessage, error.data, { server: context.server, cause: error });
    throw error;
  }
}

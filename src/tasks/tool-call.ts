/**
 * `tools/call` with tasks, for both eras:
 *
 * - `callTool` (plain): a 2025-11-25 tool whose definition says `taskSupport: 'required'` is called
 *   as a task (the server would refuse a plain call with -32601), and a 2026-07-28 server that
 *   answers with a task handle (`resultType: 'task'`) is polled; either way the caller gets the
 *   final CallToolResult, and aborting the call cancels the task (`tasks/cancel`).
 * - `callToolAsTask`: a task when the era allows asking for one (2025-11-25, a tool that is not
 *   `forbidden`); the caller holds the TaskHandle.
 */
import { ConfigError, ConnectionClosedError, RequestAbortedError } from '../core/errors.js';
import { InputRequestError, InputRoundsExceededError } from '../runtime/requests/input-errors.js';
import type { RequestOptions } from '../runtime/context/events.js';
import { takesToolTasks } from '../protocol/task-capabilities.js';
import type { TaskContext } from './context.js';
import { isModernCreated, parseLegacyCreated, parseTask } from './schemas.js';
import { TaskHandle, type Finish } from './task-handle.js';
import type { ToolTaskModes } from './tool-task-modes.js';

export interface ToolCall<T> {
  context: TaskContext;
  modes: ToolTaskModes;
  /** Lists the tools (teaching `modes`) when a tool's task support is not known on this session. */
  listTools: (options: RequestOptions | undefined) => Promise<unknown>;
  finish: Finish<T>;
  name: string;
  args: Record<string, unknown>;
  options: RequestOptions | undefined;
}

export interface TaskCallOptions extends RequestOptions {
  /** 2025-11-25: the task lifetime to ask for (`task.ttl`); the server may choose another. */
  ttlMs?: number | undefined;
}

/**
 * The plain call to a 2025-11-25 server that runs tools as tasks: as a task when the tool
 * requires one, else as usual.
 */
export async function callLegacyTool<T>(call: ToolCall<T>): Promise<T> {
  const { context, name, args, options } = call;
  const session = context.session();
  if (session && (await taskSupport(call, session)) === 'required')
    return untilDone(await createLegacyTask(call, undefined), context, options);
  return call.finish(await context.request('tools/call', { name, arguments: args }, options));
}

/** A 2026-07-28 server answered the plain call with a task: its outcome, polled for. */
export function awaitModernTask<T>(call: ToolCall<T>, raw: unknown): Promise<T> {
  const created = parseTask('modern', 'tools/call', raw, call.context.server);
  const handle = new TaskHandle(call.context, 'modern', created, call.finish, call.name).keep();
  return untilDone(handle, call.context, call.options);
}

/**
 * A task for the call. 2025-11-25: `task` in the params (a ConfigError for a tool the server
 * says is `forbidden`, or a server without task support for tools). 2026-07-28: the server
 * decides; when it answers at once the handle has no `taskId` and `result()` is that answer.
 */
export async function callToolAsTask<T>(call: ToolCall<T>, ttlMs: number | undefined): Promise<TaskHandle<T>> {
  const { context, name, args, options } = call;
  const session = context.session();
  if (session?.era === 'modern') {
    const raw = await context.request('tools/call', { name, arguments: args }, options);
    if (!isModernCreated(raw)) return new TaskHandle(context, 'modern', { answeredAtOnce: raw }, call.finish);
    return new TaskHandle(
      context,
      'modern',
      parseTask('modern', 'tools/call', raw, context.server),
      call.finish,
      name,
    ).keep();
  }
  if (!session) {
    throw new ConnectionClosedError(
      `cannot call '${name}' as a task: the server is not connected (its task support is known once it is)`,
      { server: context.server, retryable: true },
    );
  }
  if (!takesToolTasks(session.capabilities)) {
    throw new ConfigError(`[${context.server}] the server does not run tools as tasks (no tasks.requests.tools.call)`, [
      { path: 'capabilities.tasks.requests.tools.call', message: 'not declared by the server' },
    ]);
  }
  if ((await taskSupport(call, session)) === 'forbidden') {
    throw new ConfigError(`[${context.server}] tool '${name}' cannot run as a task (execution.taskSupport)`, [
      { path: 'execution.taskSupport', message: `tool '${name}' does not allow tasks` },
    ]);
  }
  return createLegacyTask(call, ttlMs);
}

async function createLegacyTask<T>(call: ToolCall<T>, ttlMs: number | undefined): Promise<TaskHandle<T>> {
  const { context, name, args, options } = call;
  const task = ttlMs === undefined ? {} : { ttl: ttlMs };
  const raw = await context.request('tools/call', { name, arguments: args, task }, options);
  return new TaskHandle(context, 'legacy', parseLegacyCreated(raw, context.server), call.finish, name).keep();
}

/** What the tools list says of the tool; listed first if not known on this session (one listing for concurrent calls). */
async function taskSupport<T>(call: ToolCall<T>, session: object) {
  const known = call.modes.modeOf(call.name, session);
  if (known !== undefined) return known;
  try {
    await call.modes.listOnce(() => call.listTools(listingOptions(call.options)));
  } catch (error) {
    // A listing that failed leaves the call as it is (a plain call), unless the caller gave up.
    if (call.options?.signal?.aborted) throw error;
  }
  return call.modes.modeOf(call.name, call.context.session()) ?? 'forbidden';
}

/** The listing a call makes first (output schemas, task modes, -32020): the call's deadline and signal, not its progress. */
export function listingOptions(options: RequestOptions | undefined): RequestOptions | undefined {
  return options && { timeoutMs: options.timeoutMs, signal: options.signal };
}

/**
 * Waits for the task's outcome. The task is this call's alone: a caller who gives up, or input
 * the client could not give (the task would wait for it forever), cancels it.
 */
async function untilDone<T>(
  handle: TaskHandle<T>,
  context: TaskContext,
  options: RequestOptions | undefined,
): Promise<T> {
  try {
    return await handle.result(options);
  } catch (error) {
    const aborted = options?.signal?.aborted === true;
    if (aborted || error instanceof InputRequestError || error instanceof InputRoundsExceededError)
      void handle.cancel().catch(() => undefined); // best effort: the caller's answer is the error
    if (!aborted) throw error;
    throw new RequestAbortedError('tools/call', { server: context.server });
  }
}

/**
 * `handle.tasks`: the task methods by task id, for a task created earlier (by this process or a
 * previous one: task ids are durable, a client may persist them and poll after a restart).
 */
import type { Era } from '../../machines/connection.types.js';
import { McpError } from '../core/errors.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { TaskReference } from '../runtime/stored/stored-state.js';
import type { TaskContext } from './context.js';
import { TaskNotFoundError } from './errors.js';
import type { TaskInfo } from './schemas.js';
import { TaskHandle, type Finish } from './task-handle.js';
import { checkReference } from './task-reference.js';
import { cancelTask, getTask, listTasks, updateTask } from './task-requests.js';

export class TaskClient<T> {
  constructor(
    private readonly context: TaskContext,
    private readonly finish: Finish<T>,
    /** The outcome of a task of a known tool (checked against its output schema). */
    private readonly finishFor: (tool: string) => Finish<T> = () => finish,
  ) {}

  /** `tasks/get`. */
  get(taskId: string, options?: RequestOptions): Promise<TaskInfo> {
    return getTask(this.context, this.era(), taskId, options);
  }

  /** The outcome of a tool-call task, polled for like `TaskHandle.result()`. */
  async result(taskId: string, options?: RequestOptions): Promise<T> {
    return (await this.open(taskId, options)).result(options);
  }

  /** A handle on an existing task (one `tasks/get` to learn its state). */
  async open(taskId: string, options?: RequestOptions): Promise<TaskHandle<T>> {
    const era = this.era();
    return new TaskHandle(this.context, era, await getTask(this.context, era, taskId, options), this.finish);
  }

  /**
   * A task started elsewhere (another process sharing the store, an earlier life of this one),
   * by the reference its handle gave (`task.reference`) or by its id (looked up in the
   * supervisor's store): one `tasks/get`, then a handle to await (`result()`), cancel or read.
   * A reference of another server or of the other era is a ConfigError, before anything is sent;
   * a task the server no longer knows is a TaskNotFoundError (and leaves the store).
   */
  async resume(ref: TaskReference | string, options?: RequestOptions): Promise<TaskHandle<T>> {
    const context = this.context;
    const now = context.session()?.era;
    const found = typeof ref === 'string' && ref !== '' ? await context.stored?.task(ref) : undefined;
    const given =
      typeof ref === 'string' && ref !== ''
        ? (found ?? { server: context.identity, era: now ?? 'legacy', taskId: ref, operation: 'tools/call', tool: '' })
        : ref;
    const reference = checkReference(given, { name: context.server, identity: context.identity, era: now });
    try {
      const task = await getTask(context, reference.era, reference.taskId, options);
      return new TaskHandle(context, reference.era, task, this.finishFor(reference.tool), reference.tool);
    } catch (error) {
      if (error instanceof TaskNotFoundError) context.stored?.forgetTask(reference.taskId);
      throw error;
    }
  }

  /** The references in the store of this server's tasks not yet seen to end (none without a store). */
  async resumable(): Promise<TaskReference[]> {
    return (await this.context.stored?.tasks()) ?? [];
  }

  /** `tasks/cancel`: the cancelled task (2025-11-25), or undefined (2026-07-28 only acknowledges). */
  cancel(taskId: string, options?: RequestOptions): Promise<TaskInfo | undefined> {
    return cancelTask(this.context, this.era(), taskId, options);
  }

  /** 2025-11-25 `tasks/list`, every page. The 2026-07-28 extension has no list: McpError -32601. */
  async list(options?: RequestOptions): Promise<{ tasks: TaskInfo[] }> {
    if (this.era() === 'modern')
      throw new McpError(-32601, 'tasks/list is not part of the 2026-07-28 tasks extension', undefined, {
        server: this.context.server,
      });
    return listTasks(this.context, options);
  }

  /** 2026-07-28 `tasks/update`: answers to a task's `inputRequests`, by key. */
  update(taskId: string, inputResponses: Record<string, unknown>, options?: RequestOptions): Promise<void> {
    return updateTask(this.context, taskId, inputResponses, options);
  }

  /** The current session's era; before any session, the 2025 shapes (the legacy era is the default). */
  private era(): Era {
    return this.context.session()?.era ?? 'legacy';
  }
}

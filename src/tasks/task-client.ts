/**
 * `handle.tasks`: the task methods by task id, for a task created earlier (by this process or a
 * previous one: task ids are durable, a client may persist them and poll after a restart).
 */
import type { Era } from '../../machines/connection.types.js';
import { McpError } from '../core/errors.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { TaskContext } from './context.js';
import type { TaskInfo } from './schemas.js';
import { TaskHandle, type Finish } from './task-handle.js';
import { cancelTask, getTask, listTasks, updateTask } from './task-requests.js';

export class TaskClient<T> {
  constructor(
    private readonly context: TaskContext,
    private readonly finish: Finish<T>,
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

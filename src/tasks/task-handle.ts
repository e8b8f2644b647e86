/**
 * One task the server runs for this client: its status, its outcome (polled for, honouring the
 * server's poll interval), its cancellation. A handle talks to the server through the server
 * handle's requests, so it outlives sessions: a poll after a re-initialization or a restart asks
 * about the same task id, and a server that lost the task answers with TaskNotFoundError.
 */
import type { Era } from '../../machines/connection.types.js';
import { McpError, RequestTimeoutError } from '../core/errors.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { TaskReference } from '../runtime/stored/stored-state.js';
import type { TaskContext } from './context.js';
import { TaskCancelledError } from './errors.js';
import { pause, pollDelay } from './pause.js';
import { isTerminal, type TaskInfo } from './schemas.js';
import { TaskInput } from './task-input.js';
import { cancelTask, getTask, legacyTaskResult, updateTask } from './task-requests.js';

/** Turns the raw outcome into the caller's type (checks a CallToolResult and its output schema). */
export type Finish<T> = (raw: unknown) => T;

export class TaskHandle<T = unknown> {
  private latest: TaskInfo | undefined;
  /** A modern server may answer a call at once: then there is no task, only this outcome. */
  private readonly answered: { raw: unknown } | undefined;
  /** 2026-07-28: the input requests answered so far (made by the first `input_required`). */
  private input: TaskInput | undefined;
  /** The call interceptors the first `result()` goes through (tools/intercepted-task.ts). */
  private around: ((poll: () => Promise<T>) => Promise<T>) | undefined;

  constructor(
    private readonly context: TaskContext,
    /** The era the task was created in: its methods and shapes. */
    readonly era: Era,
    created: TaskInfo | { answeredAtOnce: unknown },
    private readonly finish: Finish<T>,
    /** The tool the task runs ('' when not known: a task opened by id alone). */
    private readonly tool = '',
  ) {
    if ('taskId' in created) this.latest = created;
    else this.answered = { raw: created.answeredAtOnce };
  }

  /** The server's id for the task; undefined when a 2026-07-28 server answered at once (no task). */
  get taskId(): string | undefined {
    return this.latest?.taskId;
  }

  /**
   * What another process needs to await, cancel or read this task (`handle.tasks.resume(ref)`):
   * plain JSON, no secret. Undefined when a 2026-07-28 server answered at once (no task).
   */
  get reference(): TaskReference | undefined {
    const task = this.latest;
    if (!task) return undefined;
    const { identity: server } = this.context;
    return {
      server,
      era: this.era,
      taskId: task.taskId,
      operation: 'tools/call',
      tool: this.tool,
      createdAt: task.createdAt,
    };
  }

  /** @internal A task created here: its reference goes to the store (when there is one) for another process. */
  keep(): this {
    const reference = this.reference;
    if (reference && !isTerminal(this.latest!.status))
      this.context.stored?.rememberTask(reference, this.latest!.ttlMs ?? undefined);
    return this;
  }

  /** @internal The first `result()` hands its outcome to the call interceptors and returns theirs. */
  throughInterceptors(around: (poll: () => Promise<T>) => Promise<T>): this {
    this.around = around;
    return this;
  }

  /** The last status seen (creation, a poll or a notification), without asking the server. */
  get lastStatus(): TaskInfo | undefined {
    return this.latest;
  }

  /** `tasks/get`: the status now (undefined when no task was created). */
  async status(options?: RequestOptions): Promise<TaskInfo | undefined> {
    if (!this.latest) return undefined;
    this.latest = await getTask(this.context, this.era, this.latest.taskId, options);
    return this.latest;
  }

  /**
   * The outcome: polls `tasks/get` every `pollInterval` the server asks for (sooner when a status
   * notification arrives) until the task ends, then returns its result (2025-11-25: from
   * `tasks/result`). A failed task rejects with its McpError, a cancelled one with
   * TaskCancelledError. 2026-07-28 `input_required`: the task's `inputRequests` are answered
   * through the handlers and sent with `tasks/update` (InputRequestError when one cannot be,
   * InputRoundsExceededError past `maxInputRounds`). `signal` stops the waiting, not the task (see
   * `cancel()`); `timeoutMs` bounds each request, not the wait.
   */
  async result(options?: RequestOptions): Promise<T> {
    const around = this.around;
    if (around) {
      this.around = undefined;
      return around(() => this.result(options));
    }
    if (this.answered) return this.finish(this.answered.raw);
    let task = this.latest!;
    // 2026-07-28: while polled, the task's status notifications are asked for on the listen.
    const release = this.era === 'modern' && !isTerminal(task.status) ? this.context.watch(task.taskId) : undefined;
    try {
      const method = 'tasks/get';
      while (!isTerminal(task.status)) {
        if (task.status === 'input_required') {
          // 2025-11-25: the server delivers its requests on the tasks/result stream, which blocks until the end.
          if (this.era === 'legacy') {
            const outcome = await this.legacyInputOutcome(task, options);
            if (outcome) return outcome.value;
          } else await (this.input ??= new TaskInput(this.context)).answer(task, options);
        }
        const notified = await pause(this.context, this.era, task.taskId, pollDelay(task), options?.signal, method);
        task = notified ?? (await getTask(this.context, this.era, task.taskId, options));
        this.latest = task;
      }
    } finally {
      release?.();
    }
    try {
      const outcome = this.era === 'legacy' ? await this.legacyOutcome(task, options) : this.modernOutcome(task);
      this.forget();
      return outcome;
    } catch (error) {
      // The task's own failure, or cancellation, is its outcome: nobody needs to pick it up again.
      if (error instanceof McpError || error instanceof TaskCancelledError) this.forget();
      throw error;
    }
  }

  /**
   * `tasks/cancel`. 2025-11-25 answers the cancelled task; 2026-07-28 only acknowledges
   * (cooperative: the task may still end otherwise), so this resolves with the status known then.
   */
  async cancel(options?: RequestOptions): Promise<TaskInfo | undefined> {
    if (!this.latest) return undefined;
    const cancelled = await cancelTask(this.context, this.era, this.latest.taskId, options);
    if (cancelled) this.latest = cancelled;
    if (isTerminal(this.latest.status)) this.forget();
    return this.latest;
  }

  /** 2026-07-28: answers to the task's `inputRequests` (`tasks/update`), by key. */
  async update(inputResponses: Record<string, unknown>, options?: RequestOptions): Promise<void> {
    if (!this.latest) return;
    await updateTask(this.context, this.latest.taskId, inputResponses, options);
  }

  private forget(): void {
    if (this.latest) this.context.stored?.forgetTask(this.latest.taskId);
  }

  private async legacyOutcome(task: TaskInfo, options: RequestOptions | undefined): Promise<T> {
    if (task.status === 'cancelled') throw this.cancelled(task);
    // A failed task's tasks/result is the request's JSON-RPC error: it rejects as McpError.
    const raw = await legacyTaskResult(this.context, task.taskId, options);
    return this.finish(raw);
  }

  /** `tasks/result` while the server waits for input; its timeout sends the client back to polling. */
  private async legacyInputOutcome(
    task: TaskInfo,
    options: RequestOptions | undefined,
  ): Promise<{ value: T } | undefined> {
    try {
      return { value: await this.legacyOutcome(task, options) };
    } catch (error) {
      if (error instanceof RequestTimeoutError) return undefined;
      throw error;
    }
  }

  private modernOutcome(task: TaskInfo): T {
    if (task.status === 'cancelled') throw this.cancelled(task);
    if (task.status === 'failed') {
      const error = task.error ?? { code: -32603, message: task.statusMessage ?? 'the task failed' };
      throw new McpError(error.code, error.message, error.data, { server: this.context.server });
    }
    return this.finish(task.result); // missing: an InvalidResultError from finish
  }

  private cancelled(task: TaskInfo): TaskCancelledError {
    return new TaskCancelledError(task.taskId, task.statusMessage, { server: this.context.server });
  }
}

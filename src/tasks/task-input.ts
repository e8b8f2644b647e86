/**
 * 2026-07-28: a task that is `input_required` carries the server's requests by key
 * (`inputRequests`). They are answered through the user's handlers exactly as multi round-trip
 * requests are (multi-round-trip.ts does the answering), then sent with `tasks/update`; the task
 * is then polled on. Keys are unique over a task's life and the server repeats outstanding ones
 * on every poll until it has processed the answers: a key answered once is never answered again.
 * The rounds are bounded like those of a multi round-trip request (`maxInputRounds`).
 */
import { InputRoundsExceededError } from '../runtime/requests/input-errors.js';
import { answerInputRequests, type InputRequest } from '../runtime/requests/multi-round-trip.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { TaskContext } from './context.js';
import type { TaskInfo } from './schemas.js';
import { readOptions, updateTask } from './task-requests.js';

/** The one request kind the extension runs as a task (named in errors). */
const TASK_METHOD = 'tools/call';

export class TaskInput {
  private readonly answered = new Set<string>();
  private rounds = 0;

  constructor(private readonly context: TaskContext) {}

  /** Answers the keys of `task.inputRequests` not answered yet and sends them (`tasks/update`); nothing new, nothing sent. */
  async answer(task: TaskInfo, options: RequestOptions | undefined): Promise<void> {
    const fresh = Object.entries(task.inputRequests ?? {}).filter(([key]) => !this.answered.has(key));
    if (fresh.length === 0) return;
    const { context } = this;
    if (++this.rounds > context.maxInputRounds)
      throw new InputRoundsExceededError(TASK_METHOD, context.maxInputRounds, task.inputRequests, {
        server: context.server,
      });
    const requests = Object.fromEntries(fresh) as Record<string, InputRequest>;
    const inputResponses = await answerInputRequests(requests, {
      server: context.server,
      method: TASK_METHOD,
      signal: options?.signal,
      answer: (method, params, handlerContext) => context.answerInput(method, params, handlerContext),
    });
    // The server ignores answers to keys no longer outstanding: sending again after a broken connection is harmless.
    await updateTask(context, task.taskId, inputResponses ?? {}, readOptions(options));
    for (const [key] of fresh) this.answered.add(key);
  }
}

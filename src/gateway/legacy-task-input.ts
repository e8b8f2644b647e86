/**
 * A 2025-11-25 upstream task that waits for input (`input_required`) asks its question on its
 * `tasks/result` stream, as a request of the server (elicitation, sampling, roots) related to the
 * task. A 2026-07-28 host cannot answer such a request: it reads the task with `tasks/get` and
 * answers with `tasks/update` (the tasks extension). So once a host reads such a task, the gateway
 * reads its `tasks/result` itself; each request the server sends for the task is kept under a key
 * and shown on `tasks/get` as the task's `inputRequests` (status `input_required`); the host's
 * `tasks/update` answers it by that key, and the answer goes back to the server as the answer to
 * its request. The reading ends with the task, or after EXCHANGE_TTL_MS without an end.
 */
import { EXCHANGE_TTL_MS, keepQuestion, type InputMethod } from './input-exchange.js';
import type { ServerHandle } from '../handle/server-handle.js';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

type Params = Record<string, unknown>;

/** An input request as the extension carries it in `inputRequests`. */
export interface TaskInputRequest {
  method: InputMethod;
  params: Params;
}

interface Question extends TaskInputRequest {
  resolve(answer: Params): void;
}

/** One upstream task being read for its questions. */
class WaitingTask {
  readonly abort = new AbortController();
  readonly questions = new Map<string, Question>();
  private next = 0;

  ask(method: InputMethod, params: Params, signal: AbortSignal): Promise<Params> {
    return keepQuestion(this.questions, `input-${++this.next}`, signal, (resolve) => ({ method, params, resolve }));
  }

  /** The questions not answered yet, by key; undefined when there are none. */
  asked(): Record<string, TaskInputRequest> | undefined {
    if (this.questions.size === 0) return undefined;
    const asked: Record<string, TaskInputRequest> = {};
    for (const [key, { method, params }] of this.questions) asked[key] = { method, params };
    return asked;
  }

  /** The host's answers, by key: each answers its question (a key not asked, or not an object, is ignored). */
  answer(responses: Params): void {
    for (const [key, question] of this.questions) {
      const answer = responses[key];
      if (typeof answer !== 'object' || answer === null) continue;
      this.questions.delete(key);
      question.resolve(answer as Params);
    }
  }
}

export class LegacyTaskInputs {
  private readonly waiting = new Map<string, WaitingTask>();

  /**
   * The questions the 2025-11-25 task `taskId` of `server` asks now (undefined: none yet); the
   * first call starts reading its `tasks/result`, on which the server asks them.
   */
  questions(handle: ServerHandle, server: string, taskId: string): Record<string, TaskInputRequest> | undefined {
    const key = keyOf(server, taskId);
    const known = this.waiting.get(key);
    if (known) return known.asked();
    const task = new WaitingTask();
    this.waiting.set(key, task);
    const expiry = setTimeout(() => task.abort.abort(new Error('no host answered in time')), EXCHANGE_TTL_MS);
    expiry.unref();
    void handle.tasks
      .result(taskId, { signal: task.abort.signal })
      .catch(() => {}) // its outcome is read again by tasks/get once it has ended
      .finally(() => {
        clearTimeout(expiry);
        if (this.waiting.get(key) === task) this.waiting.delete(key);
      });
    return undefined;
  }

  /**
   * A request of upstream `server` related to a task read here (its `_meta` names the task): put
   * to the hosts reading the task, answered by their `tasks/update`. Undefined when it is not.
   */
  ask(server: string, method: InputMethod, params: Params, signal: AbortSignal): Promise<Params> | undefined {
    const meta = params['_meta'] as Params | undefined;
    const taskId = (meta?.[RELATED_TASK] as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId !== 'string') return undefined;
    const task = this.waiting.get(keyOf(server, taskId));
    if (!task) return undefined;
    // The upstream's own task id stays upstream: the host knows the task by its own id.
    const { [RELATED_TASK]: _related, ...rest } = meta!;
    const { _meta: _dropped, ...plain } = params;
    return task.ask(method, Object.keys(rest).length === 0 ? plain : { ...plain, _meta: rest }, signal);
  }

  /** `tasks/update` of a 2025-11-25 task: the host's answers to its questions, by key. */
  answer(server: string, taskId: string, responses: Params): void {
    this.waiting.get(keyOf(server, taskId))?.answer(responses);
  }

  close(): void {
    for (const task of this.waiting.values()) task.abort.abort(new Error('the gateway closed'));
    this.waiting.clear();
  }
}

function keyOf(server: string, taskId: string): string {
  return `${server}\n${taskId}`;
}

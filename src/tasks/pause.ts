/**
 * The wait between two polls of a task: the server's `pollInterval`, on the server's timers (hand-
 * fired in tests), cut short by the caller's abort or by a status notification for the task
 * (`notifications/tasks/status` in 2025-11-25, `notifications/tasks` in 2026-07-28), or by the
 * connection closing or failing (the poll that follows then fails fast).
 */
import { RequestAbortedError } from '../core/errors.js';
import type { TaskContext } from './context.js';
import { parseTask, type TaskInfo } from './schemas.js';
import type { Era } from '../../machines/connection.types.js';

/** When the server suggests no interval. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/** A server asking for 0 ms must not make the client spin. */
const MIN_POLL_INTERVAL_MS = 50;

const STATUS_NOTIFICATION: Record<Era, string> = {
  legacy: 'notifications/tasks/status',
  modern: 'notifications/tasks',
};

export function pollDelay(task: TaskInfo | undefined): number {
  return Math.max(task?.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, MIN_POLL_INTERVAL_MS);
}

/** Resolves after `ms`, or at once with the task a status notification carried; rejects on abort. */
export function pause(
  context: TaskContext,
  era: Era,
  taskId: string,
  ms: number,
  signal: AbortSignal | undefined,
  method: string,
): Promise<TaskInfo | undefined> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RequestAbortedError(method, { server: context.server }));
    const done = (): void => {
      context.timers.clearTimeout(timer);
      unsubscribe();
      offDown();
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(new RequestAbortedError(method, { server: context.server }));
    };
    const timer = context.timers.setTimeout(() => {
      done();
      resolve(undefined);
    }, ms);
    const unsubscribe = context.onNotification((notification) => {
      if (notification.method !== STATUS_NOTIFICATION[era]) return;
      if ((notification.params as { taskId?: unknown } | undefined)?.taskId !== taskId) return;
      let task: TaskInfo;
      try {
        task = parseTask(era, notification.method, notification.params, context.server);
      } catch {
        return; // a malformed notice: the next poll asks the server itself
      }
      done();
      resolve(task);
    });
    const offDown = context.onDown(() => {
      done();
      resolve(undefined);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

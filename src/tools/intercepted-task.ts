/**
 * `handle.callToolAsTask` through the call interceptors. The interceptors run when the task is
 * asked for, as around `callTool`; what differs is when `next()` resolves:
 *
 * - deny: the throw rejects `callToolAsTask`, no task is created;
 * - rewrite: the task is created with the arguments and options given to `next()`;
 * - short-circuit: a result returned without `next()` is a handle with no task (no `taskId`, as a
 *   2026-07-28 server answering at once), whose `result()` is that result;
 * - otherwise `callToolAsTask` resolves with the handle once the task exists, and `next()`
 *   resolves with the task's outcome when the handle's first `result()` gets it: that outcome
 *   goes back out through the interceptors, and `result()` returns what the outermost returned.
 *   Nothing polls the task for the interceptors: while nobody asks for the result, `next()` waits.
 */
import type { CallToolResult } from '../protocol/messages.js';
import type { TaskHandle } from '../tasks/task-handle.js';
import { interceptToolCall, type ToolCall, type ToolCallInterceptor } from './interceptors.js';

export function interceptTaskCall(
  interceptors: readonly ToolCallInterceptor[],
  call: ToolCall,
  /** Creates the task for the call as the interceptors left it. */
  create: (call: ToolCall) => Promise<TaskHandle<CallToolResult>>,
  /** A handle without a task, for a result an interceptor returned itself. */
  answered: (result: CallToolResult) => TaskHandle<CallToolResult>,
): Promise<TaskHandle<CallToolResult>> {
  return new Promise((resolve, reject) => {
    let handed: TaskHandle<CallToolResult> | undefined;
    const outcome: Promise<CallToolResult> = interceptToolCall(interceptors, call, async (last) => {
      const handle = await create(last);
      // `next()` called again after the task was created (a retry of the interceptor's own): another task, polled here.
      if (handed) return handle.result(last.options);
      handed = handle;
      const polled = new Promise<CallToolResult>((settle, fail) => {
        handle.throughInterceptors((poll) => {
          poll().then(settle, fail);
          return outcome;
        });
      });
      resolve(handle);
      return polled;
    });
    outcome.then(
      (result) => {
        if (!handed) resolve(answered(result));
      },
      (error: Error) => {
        if (!handed) reject(error);
      },
    );
  });
}

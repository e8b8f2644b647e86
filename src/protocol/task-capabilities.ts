/**
 * What the capabilities say about tasks, in both eras: the 2026-07-28 tasks extension (SEP-2663)
 * the client declares, and the 2025-11-25 server capability for task-augmented `tools/call`.
 * Protocol facts only: the runtime declares and reads them, src/tasks/ runs the tasks.
 */

/** The extension of spec 2026-07-28 (SEP-2663), declared in every modern request's client capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The modern client capabilities: the tasks extension added to `extensions`, the rest kept. */
export function withTasksExtension<C extends Record<string, unknown>>(capabilities: C): C {
  const extensions = capabilities['extensions'];
  const own = typeof extensions === 'object' && extensions !== null ? (extensions as Record<string, unknown>) : {};
  if (TASKS_EXTENSION in own) return capabilities;
  return { ...capabilities, extensions: { ...own, [TASKS_EXTENSION]: {} } };
}

/** 2025-11-25: the server accepts task-augmented `tools/call` (`tasks.requests.tools.call`). */
export function takesToolTasks(capabilities: Record<string, unknown> | undefined): boolean {
  const tasks = capabilities?.['tasks'] as { requests?: { tools?: { call?: unknown } } } | undefined;
  return typeof tasks?.requests?.tools?.call === 'object' && tasks.requests.tools.call !== null;
}

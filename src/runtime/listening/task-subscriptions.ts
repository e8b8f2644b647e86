/**
 * The tasks whose status notifications the modern listen asks for (the tasks extension,
 * `notifications.taskIds` of `subscriptions/listen`): the tasks being polled now, each counted
 * (two waits on one task keep it in the set until both end). A change of the set re-issues the
 * listen, but only on a server that offers the extension: elsewhere the set is never sent.
 */
import { TASKS_EXTENSION } from '../../protocol/task-capabilities.js';

/** The server's discovery declares the tasks extension: it may send `notifications/tasks` on a listen. */
export function offersTaskNotifications(capabilities: Record<string, unknown> | undefined): boolean {
  const extensions = capabilities?.['extensions'];
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

export class WatchedTasks {
  private readonly counts = new Map<string, number>();

  constructor(
    /** The set changed: the listen is issued again (when the server offers task notifications). */
    private readonly changed: () => void,
  ) {}

  ids(): string[] {
    return [...this.counts.keys()];
  }

  /** The task joins the set; the returned release (idempotent) takes it out again. */
  watch(taskId: string): () => void {
    const count = this.counts.get(taskId) ?? 0;
    this.counts.set(taskId, count + 1);
    if (count === 0) this.changed();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(taskId) ?? 1) - 1;
      if (left > 0) return void this.counts.set(taskId, left);
      this.counts.delete(taskId);
      this.changed();
    };
  }
}

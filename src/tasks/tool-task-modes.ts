/**
 * 2025-11-25: each tool's `execution.taskSupport` (`required`, `optional`, else forbidden), as the
 * server's `tools/list` said on the current session. A new session (a restarted server may
 * declare other tools) or `notifications/tools/list_changed` makes what was learned stale.
 */
export type TaskSupport = 'required' | 'optional' | 'forbidden';

export class ToolTaskModes {
  private modes = new Map<string, TaskSupport>();
  /** The session the modes were learned on; another session means they must be listed again. */
  private learnedOn: object | undefined;
  private listing: Promise<unknown> | undefined;

  /** One page of a `tools/list` result, on `session`. */
  learn(result: unknown, session: object | undefined, firstPage: boolean): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools) || session === undefined) return;
    if (firstPage || this.learnedOn !== session) this.modes = new Map();
    this.learnedOn = session;
    for (const tool of tools as { name?: unknown; execution?: { taskSupport?: unknown } }[]) {
      if (typeof tool?.name !== 'string') continue;
      const support = tool.execution?.taskSupport;
      this.modes.set(tool.name, support === 'required' || support === 'optional' ? support : 'forbidden');
    }
  }

  /** Runs `list` unless a listing is already under way, whose end is then waited for. */
  listOnce(list: () => Promise<unknown>): Promise<unknown> {
    this.listing ??= list().finally(() => (this.listing = undefined));
    return this.listing;
  }

  invalidate(): void {
    this.learnedOn = undefined;
  }

  /** undefined: not known on this session (list the tools first). */
  modeOf(tool: string, session: object | undefined): TaskSupport | undefined {
    if (session === undefined || this.learnedOn !== session) return undefined;
    return this.modes.get(tool) ?? 'forbidden';
  }
}

/**
 * The task parts of one server's tool calls, built by its first tool call or task method (an idle
 * handle holds none): the context the task code runs in, what each tool says of tasks on this
 * session, and `handle.tasks`.
 */
import type { Era } from '../../machines/connection.types.js';
import type { RequestOptions, RuntimeEvents } from '../runtime/context/events.js';
import type { HandlerContext } from '../runtime/server-input/server-requests.js';
import { realTimers, type Timers } from '../transports/transport.js';
import type { TaskContext, TaskStore } from './context.js';
import { TaskClient } from './task-client.js';
import type { Finish } from './task-handle.js';
import { ToolTaskModes } from './tool-task-modes.js';
import { isEnded } from '../../machines/connection.machine.js';

/** What tasks ask of their server; the server's runtime has each member. */
export interface TaskHost {
  readonly name: string;
  readonly timers: Timers | undefined;
  readonly maxInputRounds: number;
  readonly events: {
    on<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): () => void;
  };
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown>;
  /** The current session (one object per session: what was learned on it is keyed by it). */
  session(): { era: Era; capabilities: Record<string, unknown> } | undefined;
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>>;
  watchTask(taskId: string): () => void;
  /** The server's identity and its store (runtime/context/server-context.ts). */
  readonly context?: { readonly identity: string; readonly stored?: TaskStore | undefined };
}

export interface ToolTasks<T> {
  context: TaskContext;
  /** Each tool's `execution.taskSupport`, forgotten when the server's tools change. */
  modes: ToolTaskModes;
  client: TaskClient<T>;
}

/** The parts, wired to `host`; `finish` turns a task's raw result into the caller's. */
export function toolTasks<T>(host: TaskHost, finish: Finish<T>, finishFor?: (tool: string) => Finish<T>): ToolTasks<T> {
  const context: TaskContext = {
    server: host.name,
    identity: host.context?.identity ?? host.name,
    stored: host.context?.stored,
    timers: host.timers ?? realTimers,
    request: (method, params, options) => host.request(method, params, options),
    session: () => host.session(),
    onNotification: (listener) => host.events.on('notification', listener),
    onDown: (listener) => host.events.on('transition', ({ to }) => isEnded(to) && listener()),
    answerInput: (method, params, handlerContext) => host.answerInput(method, params, handlerContext),
    maxInputRounds: host.maxInputRounds,
    watch: (taskId) => host.watchTask(taskId),
  };
  const modes = new ToolTaskModes();
  host.events.on('listChanged', ({ list }) => list === 'tools' && modes.invalidate());
  return { context, modes, client: new TaskClient(context, finish, finishFor) };
}

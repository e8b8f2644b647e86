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

/** What tasks ask of their server: its runtime, as its port (runtime/server-port.ts) shows it. */
export interface TaskHost {
  readonly context: {
    readonly name: string;
    /** Who the server is for its task references, and its store (runtime/context/server-context.ts). */
    readonly identity: string;
    readonly stored?: TaskStore | undefined;
    readonly timers: Timers | undefined;
    readonly events: {
      on<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): () => void;
    };
    /** The current session (one object per session: what was learned on it is keyed by it). */
    session(): { era: Era; capabilities: Record<string, unknown> } | undefined;
  };
  readonly requests: { readonly maxInputRounds: number };
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown>;
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>>;
  watchTask(taskId: string): () => void;
}

export interface ToolTasks<T> {
  context: TaskContext;
  /** Each tool's `execution.taskSupport`, forgotten when the server's tools change. */
  modes: ToolTaskModes;
  client: TaskClient<T>;
}

/** The parts, wired to `host`; `finish` turns a task's raw result into the caller's. */
export function toolTasks<T>(host: TaskHost, finish: Finish<T>, finishFor?: (tool: string) => Finish<T>): ToolTasks<T> {
  const server = host.context;
  const context: TaskContext = {
    server: server.name,
    identity: server.identity,
    stored: server.stored,
    timers: server.timers ?? realTimers,
    request: (method, params, options) => host.request(method, params, options),
    session: () => server.session(),
    onNotification: (listener) => server.events.on('notification', listener),
    // Once closed or failed, not at `closing`: a wait ended then sends its last tasks/get into a
    // connection that is closing, whose refusal nobody awaits any more.
    onDown: (listener) => server.events.on('transition', ({ to }) => to !== 'closing' && isEnded(to) && listener()),
    answerInput: (method, params, handlerContext) => host.answerInput(method, params, handlerContext),
    maxInputRounds: host.requests.maxInputRounds,
    watch: (taskId) => host.watchTask(taskId),
  };
  const modes = new ToolTaskModes();
  server.events.on('listChanged', ({ list }) => list === 'tools' && modes.invalidate());
  return { context, modes, client: new TaskClient(context, finish, finishFor) };
}

/**
 * What the task code needs from a server handle: its requests (which wait for the connection and
 * survive re-initializations and restarts), its session (era and capabilities), its
 * notifications and its timers. Kept an interface so src/tasks/ never imports the handle.
 */
import type { Era } from '../../machines/connection.types.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { HandlerContext } from '../runtime/server-input/server-requests.js';
import type { Timers } from '../transports/transport.js';
import type { StoredState } from '../runtime/stored/stored-state.js';

/** What tasks keep in the supervisor's store: references another process can resume. */
export type TaskStore = Pick<StoredState, 'rememberTask' | 'task' | 'tasks' | 'forgetTask'>;

export interface TaskContext {
  readonly server: string;
  /** The server's identity (task references name it, runtime/stored/server-identity.ts). */
  readonly identity: string;
  /** Where task references are kept; undefined without a store. */
  readonly stored?: TaskStore | undefined;
  readonly timers: Timers;
  request(method: string, params: Record<string, unknown>, options?: RequestOptions): Promise<unknown>;
  /** The current session's era and server capabilities; undefined while there is none. */
  session(): { era: Era; capabilities: Record<string, unknown> } | undefined;
  onNotification(listener: (notification: JsonRpcNotification) => void): () => void;
  /** The connection closed or failed: a wait ends, so the next poll fails fast instead of later. */
  onDown(listener: () => void): () => void;
  /** 2026-07-28: one of a task's input requests, answered as a multi round-trip request's (the user's handlers). */
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>>;
  /** How many `tasks/update` rounds a task may ask for before the wait fails (`maxInputRounds`). */
  readonly maxInputRounds: number;
  /**
   * 2026-07-28: the task's status notifications are asked for on the listen while it is polled
   * (when the server offers them); returns the release, called once the polling ends.
   */
  watch(taskId: string): () => void;
}

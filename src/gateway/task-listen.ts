/**
 * A 2026-07-28 host's `subscriptions/listen` that names tasks (`notifications.taskIds`, the tasks
 * extension): the SDK's listen knows only the list changes, so such a listen is served here, whole.
 * The acknowledgement names the tasks the gateway will report on (those it could read) and the
 * list changes it honours; each task's `notifications/tasks` then carries its full state, as
 * `tasks/get` would answer. The gateway watches a task by reading it from its upstream server at
 * the task's poll interval (the same for both eras upstream), and reports it when it changed, until
 * it ends. A task the server lost, or whose server failed for good, ends `failed` with an error
 * naming the server; a server that is only away is read again at the next interval: never a hang.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  ProtocolError,
  SUBSCRIPTION_ID_META_KEY,
  type ServerNotifier,
} from '@modelcontextprotocol/server';
import { TASKS_EXTENSION } from '../protocol/task-capabilities.js';
import { isTerminal } from '../tasks/schemas.js';
import { owner } from './host-tasks.js';
import { hostTakesTasks, readTask, type ModernTask } from './modern-tasks.js';
import { writeJson } from './session-transport.js';
import type { Sessions } from './sessions.js';
import type { Surface } from './surface.js';
import { isDownForGood } from '../handle/status.js';

type Params = Record<string, unknown>;

/** How often a task is read when its server names no poll interval, and the bounds of one it names. */
const DEFAULT_POLL_MS = 1_000;
const MIN_POLL_MS = 10;
const MAX_POLL_MS = 60_000;

interface Filter {
  taskIds?: string[];
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** An open listen: its request id and host (the envelope's client info), to match a cancellation. */
interface OpenListen {
  id: string | number;
  client: string;
}

export class TaskListens {
  private readonly open = new Map<() => void, OpenListen>();

  constructor(
    private readonly surface: Surface,
    private readonly sessions: Sessions,
    private readonly holdMs: number,
  ) {}

  /**
   * Serves the request when it is a valid 2026-07-28 `subscriptions/listen` naming tasks (true);
   * anything else is left to the SDK's handler, which serves or refuses it (false).
   */
  serve(req: IncomingMessage, res: ServerResponse, body: unknown): boolean {
    const message = body as { id?: unknown; method?: unknown; params?: { notifications?: Filter; _meta?: Params } };
    if (message.method === 'notifications/cancelled') return this.cancelled(res, message.params);
    if (message.method !== 'subscriptions/listen') return false;
    const filter = message.params?.notifications;
    if (!Array.isArray(filter?.taskIds) || filter.taskIds.length === 0) return false;
    if (!filter.taskIds.every((id) => typeof id === 'string')) return false;
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header(req, 'mcp-protocol-version'),
      mcpMethodHeader: header(req, 'mcp-method'),
      body,
    });
    if (route.kind !== 'modern' || route.messageKind !== 'request') return false;
    const id = message.id as string | number;
    if (!hostTakesTasks(message.params?._meta?.[CLIENT_CAPABILITIES_META_KEY])) {
      const data = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
      writeJson(res, {
        jsonrpc: '2.0',
        id,
        error: { code: -32021, message: 'Missing required client capability', data },
      });
      return true;
    }
    void this.listen({ id, client: clientOf(message.params?._meta) }, filter, res);
    return true;
  }

  /** Ends every open listen (the gateway is closing). */
  close(): void {
    for (const end of [...this.open.keys()]) end();
  }

  /**
   * A host's `notifications/cancelled` naming a listen served here: the listen ends — its tasks
   * are no longer read upstream, and nothing more is written for it (a cancelled request gets no
   * answer) — and the notification is accepted (202). Over HTTP closing the stream is the
   * spec's cancellation (handled too, below); a host may send both. A request id is only the
   * host's own, and 2026-07-28 has no session: the listen is ended only when exactly one open
   * listen has that id and the host named itself the same (client info); otherwise the
   * notification is left to the SDK's handler, as before.
   */
  private cancelled(res: ServerResponse, params: { _meta?: Params; requestId?: unknown } | undefined): boolean {
    const requestId = params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return false;
    const client = clientOf(params?._meta);
    const named = [...this.open].filter(
      ([, open]) => open.id === requestId && (client === '' || open.client === client),
    );
    if (named.length !== 1) return false;
    named[0]![0]();
    res.writeHead(202).end();
    return true;
  }

  private async listen(listen: OpenListen, filter: Filter, res: ServerResponse): Promise<void> {
    const { id } = listen;
    const abort = new AbortController();
    const timers = new Set<NodeJS.Timeout>();
    const write = (method: string, params: Params) => {
      if (res.writableEnded) return;
      const message = { jsonrpc: '2.0', method, params: { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: id } } };
      res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    };
    const notifier = listChanges(filter, write);
    const end = () => {
      abort.abort();
      for (const timer of timers) clearTimeout(timer);
      this.sessions.removeNotifier(notifier);
      this.open.delete(end);
      if (!res.writableEnded) res.end();
    };
    this.open.set(end, listen);
    res.once('close', end);

    // The tasks the gateway can read now are the ones it reports on (a server that is away is not
    // waited for: the acknowledgement would wait with it).
    const read = await Promise.all(filter.taskIds!.map((taskId) => this.read(taskId, 0, abort.signal)));
    const first = read.filter((task): task is ModernTask => task !== undefined);
    if (abort.signal.aborted) return;
    this.sessions.addNotifier(notifier);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    write('notifications/subscriptions/acknowledged', { notifications: honoured(filter, first) });

    // Each task: its state now, then each change, read at its poll interval until it ends.
    const report = (task: ModernTask) => {
      write('notifications/tasks', { ...task });
      if (!isTerminal(task.status)) poll(task);
    };
    const poll = (task: ModernTask) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        void this.next(task, abort.signal).then((next) => {
          if (abort.signal.aborted) return;
          if (changed(task, next)) report(next);
          else poll(next);
        });
      }, pollMs(task));
      timers.add(timer);
    };
    for (const task of first) report(task);
  }

  /** The task as the host's `tasks/get` would read it; undefined when it cannot be read. */
  private async read(hostTaskId: string, holdMs: number, signal: AbortSignal): Promise<ModernTask | undefined> {
    try {
      const { handle, name, taskId } = owner(this.surface, hostTaskId);
      return await readTask(handle, name, taskId, holdMs, this.sessions.taskInputs, signal);
    } catch {
      return undefined;
    }
  }

  /**
   * The task's next state: as read, or `failed` when it can never be read again (the server lost
   * it, or failed for good); unchanged while its server is only away.
   */
  private async next(task: ModernTask, signal: AbortSignal): Promise<ModernTask> {
    try {
      const { handle, name, taskId } = owner(this.surface, task.taskId);
      try {
        return await readTask(handle, name, taskId, this.holdMs, this.sessions.taskInputs, signal);
      } catch (error) {
        const lost = error instanceof ProtocolError && (error.data as { reason?: unknown })?.reason === 'task_lost';
        if (!lost && !isDownForGood(handle.status().state)) return task;
        return failed(task, error);
      }
    } catch (error) {
      return failed(task, error); // its server is no longer configured
    }
  }
}

/** What the acknowledgement names: the readable tasks, and the list changes asked for (the gateway offers them all). */
function honoured(filter: Filter, tasks: ModernTask[]): Filter {
  return {
    taskIds: tasks.map((task) => task.taskId),
    ...(filter.toolsListChanged === true && { toolsListChanged: true }),
    ...(filter.promptsListChanged === true && { promptsListChanged: true }),
    ...(filter.resourcesListChanged === true && { resourcesListChanged: true }),
    ...(Array.isArray(filter.resourceSubscriptions) && { resourceSubscriptions: filter.resourceSubscriptions }),
  };
}

/** The list changes this listen asked for, written onto its stream. */
function listChanges(filter: Filter, write: (method: string, params: Params) => void): ServerNotifier {
  const uris = new Set(Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions : []);
  return {
    toolsChanged: () => filter.toolsListChanged === true && write('notifications/tools/list_changed', {}),
    promptsChanged: () => filter.promptsListChanged === true && write('notifications/prompts/list_changed', {}),
    resourcesChanged: () => filter.resourcesListChanged === true && write('notifications/resources/list_changed', {}),
    resourceUpdated: (uri) => uris.has(uri) && write('notifications/resources/updated', { uri }),
  };
}

function changed(before: ModernTask, after: ModernTask): boolean {
  return (
    before.status !== after.status ||
    before.lastUpdatedAt !== after.lastUpdatedAt ||
    before.statusMessage !== after.statusMessage ||
    JSON.stringify(before.inputRequests) !== JSON.stringify(after.inputRequests)
  );
}

function failed(task: ModernTask, error: unknown): ModernTask {
  const { code, message, data } =
    error instanceof ProtocolError ? error : { code: -32603, message: String(error), data: undefined };
  const { result: _result, inputRequests: _input, ...rest } = task;
  return {
    ...rest,
    status: 'failed',
    statusMessage: message,
    lastUpdatedAt: new Date().toISOString(),
    error: { code, message, ...(data === undefined ? {} : { data }) },
  };
}

function pollMs(task: ModernTask): number {
  const asked = task.pollIntervalMs ?? DEFAULT_POLL_MS;
  return Math.min(Math.max(asked, MIN_POLL_MS), MAX_POLL_MS);
}

/** The host as its envelope names it (client info), '' when it names none. */
function clientOf(meta: Params | undefined): string {
  const info = meta?.[CLIENT_INFO_META_KEY];
  return info === undefined ? '' : JSON.stringify(info);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

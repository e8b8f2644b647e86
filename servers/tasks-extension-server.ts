// A 2026-07-28 server with the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), by
// the extension's spec (modelcontextprotocol/ext-tasks, specification/draft/tasks.md): the v2
// server package does not implement the extension, so this is plain node:http. Stateless JSON
// answers; tools/call of `build` or `flaky` answers a CreateTaskResult (resultType 'task') when
// the request declares the extension, -32021 when it does not; `quick` answers at once. A
// task's work ends when the test says so (`complete`, `fail`, `needInput`), never after a delay.
// The scripted tools need input during the task (the extension's `input_required`, answered with
// `tasks/update`): `greet` asks a name (the spec's example flow); `interview` asks a name and the
// roots in one round, then a sampling in a second; `endless` asks a new question every round.
// With `listen: true`, `subscriptions/listen` opens an SSE stream that carries
// `notifications/tasks` for the `taskIds` asked for (acknowledged first), on every status change.
// Test fixture code only.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { listenOnLoopback, readBody, type Listening } from './listen.js';
import { formatSseEvent, startSse } from './sse-writer.js';

const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

export interface SeenRequest {
  method: string;
  params: Record<string, unknown>;
  headers: { 'mcp-method'?: string; 'mcp-name'?: string; 'mcp-protocol-version'?: string };
}

interface StoredTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  inputRequests?: Record<string, unknown>;
  target: string;
  /** Scripted tools: the questions of each round, and every answer received. */
  script?: (round: number) => Record<string, unknown> | undefined;
  round?: number;
  answers?: Record<string, unknown>;
}

const ELICIT_NAME = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Please enter your name.',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
};
const SAMPLE = {
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'Summarize' } }], maxTokens: 50 },
};

/** The rounds of input each scripted tool asks for (undefined: the task completes). */
const SCRIPTS: Record<string, (round: number) => Record<string, unknown> | undefined> = {
  greet: (round) => (round === 0 ? { name: ELICIT_NAME } : undefined),
  interview: (round) => [{ name: ELICIT_NAME, roots: { method: 'roots/list' } }, { summary: SAMPLE }][round],
  endless: (round) => ({ [`q${round + 1}`]: ELICIT_NAME }),
};

interface OpenListen {
  id: unknown;
  taskIds: string[];
  write(message: unknown): void;
}

export interface TasksExtensionServer {
  readonly url: string;
  /** The `notifications.taskIds` of every listen opened, in order. */
  readonly listened: string[][];
  /** Listens whose stream is open now. */
  openListens(): number;
  readonly seen: SeenRequest[];
  /** Ids of the tasks created, oldest first. */
  readonly created: string[];
  count(method: string): number;
  complete(taskId: string): void;
  fail(taskId: string, code: number, message: string): void;
  needInput(taskId: string, inputRequests: Record<string, unknown>): void;
  status(taskId: string): string | undefined;
  restart(options: { keepTasks: boolean }): Promise<void>;
  close(): Promise<void>;
}

export async function startTasksExtensionServer(options: {
  pollIntervalMs: number;
  /** Serve `subscriptions/listen` with task status notifications (else -32601). */
  listen?: boolean;
}): Promise<TasksExtensionServer> {
  let tasks = new Map<string, StoredTask>();
  const seen: SeenRequest[] = [];
  const created: string[] = [];
  const listens = new Set<OpenListen>();
  const listened: string[][] = [];

  function update(taskId: string, change: Partial<StoredTask>): void {
    const task = tasks.get(taskId);
    if (!task) throw new Error(`no task ${taskId}`);
    Object.assign(task, change, { lastUpdatedAt: new Date().toISOString() });
    for (const listen of listens)
      if (listen.taskIds.includes(taskId))
        listen.write({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...view(task), _meta: meta(listen) } });
  }

  /** The next round of a scripted task, or its result once the script has no more questions. */
  function nextRound(task: StoredTask): void {
    const round = task.round ?? 0;
    const questions = task.script?.(round);
    if (questions) return update(task.taskId, { status: 'input_required', inputRequests: questions, round });
    const text = JSON.stringify(task.answers ?? {});
    update(task.taskId, {
      status: 'completed',
      inputRequests: undefined,
      result: { content: [{ type: 'text', text }] },
    });
  }

  /** Answers to outstanding keys are kept (others ignored, as the spec says); all answered: the task goes on. */
  function receiveInput(task: StoredTask, responses: Record<string, unknown>): void {
    const outstanding = task.inputRequests ?? {};
    for (const [key, response] of Object.entries(responses))
      if (key in outstanding) task.answers = { ...task.answers, [key]: response };
    if (!task.script) return update(task.taskId, { status: 'working', inputRequests: undefined });
    if (Object.keys(outstanding).every((key) => task.answers && key in task.answers)) {
      task.round = (task.round ?? 0) + 1;
      nextRound(task);
    }
  }

  function answer(method: string, params: Record<string, unknown>): { result?: unknown; error?: unknown } {
    const meta = (params['_meta'] ?? {}) as Record<string, unknown>;
    const version = meta['io.modelcontextprotocol/protocolVersion'];
    if (version !== VERSION)
      return { error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [VERSION] } } };
    const capabilities = meta['io.modelcontextprotocol/clientCapabilities'] as
      { extensions?: Record<string, unknown> } | undefined;
    const declared = capabilities?.extensions?.[TASKS] !== undefined;
    const missing = {
      error: {
        code: -32021,
        message: 'Missing required client capability',
        data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
      },
    };
    const taskId = params['taskId'] as string;
    const known = tasks.get(taskId);
    const notFound = { error: { code: -32602, message: 'Failed to retrieve task: Task not found' } };
    switch (method) {
      case 'server/discover':
        return {
          result: {
            resultType: 'complete',
            supportedVersions: [VERSION],
            capabilities: { tools: {}, extensions: { [TASKS]: {} } },
            _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'tasks-extension-fixture', version: '1.0.0' } },
          },
        };
      case 'tools/list':
        return {
          result: {
            resultType: 'complete',
            tools: ['build', 'flaky', 'quick', ...Object.keys(SCRIPTS)].map((name) => ({
              name,
              inputSchema: { type: 'object', properties: { target: { type: 'string' } } },
            })),
          },
        };
      case 'tools/call': {
        const name = params['name'];
        const target = String((params['arguments'] as { target?: unknown } | undefined)?.target);
        if (name === 'quick')
          return { result: { resultType: 'complete', content: [{ type: 'text', text: `quick ${target}` }] } };
        if (!declared) return missing;
        const now = new Date().toISOString();
        const task: StoredTask = {
          taskId: randomUUID(),
          status: 'working',
          createdAt: now,
          lastUpdatedAt: now,
          ttlMs: 60_000,
          pollIntervalMs: options.pollIntervalMs,
          target,
        };
        tasks.set(task.taskId, task);
        created.push(task.taskId);
        const createdView = view(task);
        // A scripted tool needs its first input right away (after the task is durably created).
        if (typeof name === 'string' && SCRIPTS[name]) {
          task.script = SCRIPTS[name];
          nextRound(task);
        }
        return { result: { resultType: 'task', ...createdView } };
      }
      case 'tasks/get':
        if (!declared) return missing;
        return known ? { result: { resultType: 'complete', ...view(known) } } : notFound;
      case 'tasks/cancel':
        if (!declared) return missing;
        if (!known) return notFound;
        if (known.status === 'working' || known.status === 'input_required') update(taskId, { status: 'cancelled' });
        return { result: { resultType: 'complete' } };
      case 'tasks/update':
        if (!declared) return missing;
        if (!known) return notFound;
        receiveInput(known, (params['inputResponses'] ?? {}) as Record<string, unknown>);
        return { result: { resultType: 'complete' } };
      default:
        return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const body = JSON.parse(await readBody(req)) as { id?: unknown; method?: string; params?: Record<string, unknown> };
    const method = body.method ?? '';
    const params = body.params ?? {};
    seen.push({
      method,
      params,
      headers: {
        'mcp-method': header(req, 'mcp-method'),
        'mcp-name': header(req, 'mcp-name'),
        'mcp-protocol-version': header(req, 'mcp-protocol-version'),
      },
    });
    if (body.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    if (method === 'subscriptions/listen' && options.listen) return openListen(body.id, params, res);
    const outcome = answer(method, params);
    res.writeHead(outcome.error && (outcome.error as { code: number }).code === -32022 ? 400 : 200, {
      'content-type': 'application/json',
    });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...outcome }));
  }

  /** The listen's stream: acknowledged at once with the task ids it will notify about (the ones it knows). */
  function openListen(id: unknown, params: Record<string, unknown>, res: ServerResponse): void {
    const wanted = ((params['notifications'] as { taskIds?: unknown } | undefined)?.taskIds ?? []) as string[];
    const taskIds = wanted.filter((taskId) => tasks.has(taskId));
    listened.push(wanted);
    startSse(res);
    const listen: OpenListen = {
      id,
      taskIds,
      write: (message) => res.write(formatSseEvent({ data: JSON.stringify(message) })),
    };
    listens.add(listen);
    res.on('close', () => listens.delete(listen));
    listen.write({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: meta(listen), notifications: { taskIds } },
    });
  }

  async function listen(port: number): Promise<Listening> {
    const http = createServer((req, res) => {
      handle(req, res).catch(() => res.destroy());
    });
    return listenOnLoopback(http, port);
  }

  let listening = await listen(0);
  const port = listening.port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    listened,
    openListens: () => listens.size,
    seen,
    created,
    count: (method) => seen.filter((request) => request.method === method).length,
    complete(taskId) {
      const task = tasks.get(taskId);
      update(taskId, { status: 'completed', result: { content: [{ type: 'text', text: `built ${task?.target}` }] } });
    },
    fail(taskId, code, message) {
      update(taskId, { status: 'failed', statusMessage: message, error: { code, message } });
    },
    needInput(taskId, inputRequests) {
      update(taskId, { status: 'input_required', inputRequests });
    },
    status: (taskId) => tasks.get(taskId)?.status,
    async restart({ keepTasks }) {
      await listening.close();
      if (!keepTasks) tasks = new Map();
      listening = await listen(port);
    },
    close: () => listening.close(),
  };
}

/** The task as the wire shows it (without the fixture's own fields). */
function view(task: StoredTask): Record<string, unknown> {
  const { target: _target, script: _script, round: _round, answers: _answers, ...wire } = task;
  return Object.fromEntries(Object.entries(wire).filter(([, value]) => value !== undefined));
}

function meta(listen: OpenListen): Record<string, unknown> {
  return { 'io.modelcontextprotocol/subscriptionId': listen.id };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

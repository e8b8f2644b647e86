// A 2025-11-25 server with experimental tasks, built with the official SDK (v1) the way its
// example does (examples/server/simpleStreamableHttp.ts: `taskStore`, `taskMessageQueue`,
// `server.experimental.tasks.registerToolTask` with createTask/getTask/getTaskResult), on node:http.
// The work of a task ends when the test says so (`complete`), never after a delay.
// Test fixture code only.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { ToolTaskHandler } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { listenOnLoopback, readBody, type Listening } from './listen.js';

export interface SdkTaskServerOptions {
  /** Sessions (`Mcp-Session-Id`, a GET stream for `notifications/tasks/status`) or one server per request. */
  stateful: boolean;
  /** The `pollInterval` the tasks suggest. */
  pollIntervalMs: number;
}

export interface SdkTaskServer {
  readonly url: string;
  /** Ids of the tasks the tools created, oldest first (this life of the server and earlier ones kept). */
  readonly created: string[];
  /** Requests received, by JSON-RPC method. */
  readonly requests: Record<string, number>;
  /** The task's work is done: its result is stored (status `completed`). */
  complete(taskId: string): Promise<void>;
  status(taskId: string): Promise<string | undefined>;
  /** Stops and starts on the same port; `keepTasks: false` is a server without durable task storage. */
  restart(options: { keepTasks: boolean }): Promise<void>;
  close(): Promise<void>;
}

type Finisher = () => Promise<void>;
const targetShape = { target: z.string() };

export async function startSdkTaskServer(options: SdkTaskServerOptions): Promise<SdkTaskServer> {
  let taskStore = new InMemoryTaskStore();
  const finishers = new Map<string, Finisher>();
  const created: string[] = [];
  const requests: Record<string, number> = {};
  const transports = new Map<string, StreamableHTTPServerTransport>();

  function buildServer(): McpServer {
    const server = new McpServer(
      { name: 'sdk-task-fixture', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore,
        taskMessageQueue: new InMemoryTaskMessageQueue(),
      },
    );
    server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    const job = (label: string): ToolTaskHandler<typeof targetShape> => ({
      async createTask({ target }, extra) {
        const task = await extra.taskStore.createTask({
          ttl: extra.taskRequestedTtl,
          pollInterval: options.pollIntervalMs,
        });
        created.push(task.taskId);
        // Stateful: through the request's store, which also sends notifications/tasks/status.
        const store = options.stateful ? extra.taskStore : taskStore;
        finishers.set(task.taskId, () =>
          store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `${label} ${target}` }] }),
        );
        return { task };
      },
      async getTask(_args, extra) {
        return await extra.taskStore.getTask(extra.taskId);
      },
      async getTaskResult(_args, extra) {
        return (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult;
      },
    });
    server.experimental.tasks.registerToolTask(
      'build',
      { description: 'A long build: always a task', inputSchema: targetShape },
      job('built'),
    );
    server.experimental.tasks.registerToolTask(
      'summarize',
      {
        description: 'A task when asked for one',
        inputSchema: targetShape,
        execution: { taskSupport: 'optional' },
      },
      job('summarized'),
    );
    // Stateful only: the work asks the user (elicitation related to the task, queued for tasks/result).
    server.experimental.tasks.registerToolTask(
      'deploy',
      { description: 'Asks for approval, then deploys', inputSchema: targetShape },
      {
        async createTask({ target }, extra) {
          const task = await extra.taskStore.createTask({
            ttl: extra.taskRequestedTtl,
            pollInterval: options.pollIntervalMs,
          });
          created.push(task.taskId);
          void (async () => {
            await extra.taskStore.updateTaskStatus(task.taskId, 'input_required');
            const answer = await server.server.elicitInput(
              {
                mode: 'form',
                message: `Deploy ${target}?`,
                requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
              },
              { relatedTask: { taskId: task.taskId } },
            );
            await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: `deploy ${target}: ${answer.action}` }],
            });
          })().catch((error: unknown) => console.error('deploy task:', error));
          return { task };
        },
        async getTask(_args, extra) {
          return await extra.taskStore.getTask(extra.taskId);
        },
        async getTaskResult(_args, extra) {
          return (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult;
        },
      },
    );
    return server;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    if (req.method === 'POST') {
      body = JSON.parse(await readBody(req)) as unknown;
      const method = (body as { method?: unknown }).method;
      if (typeof method === 'string') requests[method] = (requests[method] ?? 0) + 1;
    }
    if (!options.stateful) {
      if (req.method !== 'POST') return jsonError(res, 405, 'Method not allowed.');
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }
    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (existing) return existing.handleRequest(req, res, body);
    if (typeof sid === 'string') return jsonError(res, 404, 'Session not found');
    if ((body as { method?: unknown } | undefined)?.method !== 'initialize')
      return jsonError(res, 400, 'Bad Request: No valid session ID provided');
    const server = buildServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function listen(port: number): Promise<Listening> {
    const http = createServer((req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) jsonError(res, 500, String(error));
        else res.destroy();
      });
    });
    return listenOnLoopback(http, port);
  }

  let listening = await listen(0);
  const port = listening.port;

  async function stop(): Promise<void> {
    const all = [...transports.values()];
    transports.clear();
    await Promise.allSettled(all.map((transport) => transport.close()));
    await listening.close();
  }

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    created,
    requests,
    async complete(taskId) {
      const finish = finishers.get(taskId);
      if (!finish) throw new Error(`no running task ${taskId}`);
      finishers.delete(taskId);
      await finish();
    },
    async status(taskId) {
      return (await taskStore.getTask(taskId))?.status;
    },
    async restart({ keepTasks }) {
      await stop();
      if (!keepTasks) {
        taskStore.cleanup();
        taskStore = new InMemoryTaskStore();
        finishers.clear();
      }
      listening = await listen(port);
    },
    async close() {
      await stop();
      taskStore.cleanup();
    },
  };
}

function jsonError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

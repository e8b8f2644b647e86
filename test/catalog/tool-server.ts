/**
 * An MCP server built with the official SDK (McpServer + StreamableHTTPServerTransport on
 * node:http, as in its examples) whose tools a test changes: `setTools()` changes them on every
 * live session (the SDK sends `notifications/tools/list_changed`), `restart(tools)` comes back on
 * the same port with every session gone and maybe other tools, `stop()` / `start()` refuse
 * connections meanwhile. It records tool calls and the calls the client cancelled.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { readBody } from '../../servers/listen.js';

export interface ToolSpec {
  name: string;
  description?: string;
  /** What the tool answers; default: `<name>: <text>` as text. */
  result?: (args: { text?: string | undefined }) => CallToolResult;
  /** Annotated `readOnlyHint`: a call the connection lost on the way may be sent again. */
  readOnly?: boolean;
  /** Wait for the client to cancel (the call's signal) or for `release()`. */
  hang?: boolean;
}

export interface ToolServer {
  url: string;
  /** Tool calls so far: `name(text)`. */
  calls: string[];
  /** Tool calls the client cancelled (notifications/cancelled). */
  cancelled: string[];
  /** Requests so far by JSON-RPC method (across restarts). */
  requests: Record<string, number>;
  setTools(tools: ToolSpec[]): void;
  restart(tools?: ToolSpec[]): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Answers every hanging call. */
  release(): void;
  close(): Promise<void>;
}

interface Session {
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  registered: RegisteredTool[];
}

export async function startToolServer(initial: ToolSpec[]): Promise<ToolServer> {
  let tools = initial;
  let sessions = new Map<string, Session>();
  const sockets = new Set<Socket>();
  const calls: string[] = [];
  const cancelled: string[] = [];
  const requests: Record<string, number> = {};
  let waiting: (() => void)[] = [];
  let http: Server | undefined;
  let port = 0;

  function register(session: Session): void {
    for (const tool of session.registered) tool.remove();
    session.registered = tools.map((spec) =>
      session.server.registerTool(
        spec.name,
        {
          description: spec.description ?? `the ${spec.name} tool`,
          inputSchema: { text: z.string().optional() },
          annotations: spec.readOnly ? { readOnlyHint: true } : undefined,
        },
        async ({ text }, extra) => {
          calls.push(`${spec.name}(${text ?? ''})`);
          if (spec.hang) {
            await new Promise<void>((resolve) => {
              waiting.push(resolve);
              extra.signal.addEventListener('abort', () => {
                cancelled.push(spec.name);
                resolve();
              });
            });
          }
          return spec.result?.({ text }) ?? { content: [{ type: 'text', text: `${spec.name}: ${text ?? ''}` }] };
        },
      ),
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    const known = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (req.method !== 'POST') {
      if (!known) return void res.writeHead(404).end();
      return known.transport.handleRequest(req, res);
    }
    const body = JSON.parse(await readBody(req)) as { method?: string };
    if (typeof body.method === 'string') requests[body.method] = (requests[body.method] ?? 0) + 1;
    if (known) return known.transport.handleRequest(req, res, body);
    if (sessionId !== undefined || body.method !== 'initialize') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
      );
    }
    const map = sessions;
    const session: Session = {
      server: new McpServer(
        { name: 'tool-server', version: '1.0.0' },
        { capabilities: { tools: { listChanged: true } } },
      ),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void map.set(id, session),
      }),
      registered: [],
    };
    register(session);
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
  }

  async function start(): Promise<void> {
    if (http) return;
    const server = createServer((req, res) => {
      handle(req, res).catch(() => (res.headersSent ? res.destroy() : res.writeHead(500).end()));
    });
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    http = server;
  }

  async function stop(): Promise<void> {
    const server = http;
    http = undefined;
    const old = sessions;
    sessions = new Map();
    await Promise.allSettled([...old.values()].map((session) => session.transport.close()));
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    for (const socket of sockets) socket.destroy();
    await closed;
  }

  await start();
  return {
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    calls,
    cancelled,
    requests,
    setTools(next) {
      tools = next;
      for (const session of sessions.values()) register(session);
    },
    async restart(next) {
      await stop();
      if (next) tools = next;
      await start();
    },
    stop,
    start,
    release() {
      const resolvers = waiting;
      waiting = [];
      for (const resolve of resolvers) resolve();
    },
    close: stop,
  };
}

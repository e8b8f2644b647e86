// MCP servers built with the official SDK (McpServer + StreamableHTTPServerTransport) on plain node:http.
// Test fixture code only.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { listenOnLoopback, readBody } from './listen.js';

export interface SdkServerOptions {
  stateful: boolean;
  /** enableJsonResponse: answer requests with application/json instead of SSE. Default false. */
  jsonResponse?: boolean;
  /** Status for an unknown (stateful) session id. Default 404 (spec); the SDK examples use 400. */
  unknownSessionStatus?: 400 | 404;
}

export interface SdkServer {
  url: string;
  close(): Promise<void>;
  sessionCount(): number;
  terminateAllSessions(): Promise<void>;
}

function buildMcpServer(): McpServer {
  const server = new McpServer({ name: 'sdk-fixture', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the given text', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'countdown',
    {
      description: 'Sends `steps` progress notifications, `everyMs` apart, then answers',
      inputSchema: { steps: z.number(), everyMs: z.number() },
    },
    async ({ steps, everyMs }, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: steps, message: `step ${step}` },
          });
        }
      }
      return { content: [{ type: 'text', text: `done after ${steps}` }] };
    },
  );
  return server;
}

function sendJsonError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function isInitializeRequest(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    (body as { method?: unknown }).method === 'initialize'
  );
}

export async function startSdkServer(options: SdkServerOptions): Promise<SdkServer> {
  const enableJsonResponse = options.jsonResponse ?? false;
  const unknownStatus = options.unknownSessionStatus ?? 404;
  const transports = new Map<string, StreamableHTTPServerTransport>();

  async function parseBody(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ ok: true; body: unknown } | { ok: false }> {
    const raw = await readBody(req);
    try {
      return { ok: true, body: JSON.parse(raw) as unknown };
    } catch {
      sendJsonError(res, 400, -32700, 'Parse error');
      return { ok: false };
    }
  }

  async function handleStateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      sendJsonError(res, 405, -32000, 'Method not allowed.', { allow: 'POST' });
      return;
    }
    const parsed = await parseBody(req, res);
    if (!parsed.ok) return;
    const server = buildMcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed.body);
  }

  async function handleStateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawSid = req.headers['mcp-session-id'];
    const sid = Array.isArray(rawSid) ? rawSid[0] : rawSid;
    let body: unknown;
    if (req.method === 'POST') {
      const parsed = await parseBody(req, res);
      if (!parsed.ok) return;
      body = parsed.body;
    }
    if (sid) {
      const transport = transports.get(sid);
      if (!transport) {
        sendJsonError(res, unknownStatus, -32001, 'Session not found');
        return;
      }
      await transport.handleRequest(req, res, body);
      // A successful DELETE ran onsessionclosed (removed from the map): release the transport too.
      if (req.method === 'DELETE' && transports.get(sid) !== transport) await transport.close();
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const server = buildMcpServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse,
        onsessioninitialized: (id) => {
          transports.set(id, transport);
        },
        onsessionclosed: (id) => {
          transports.delete(id);
        },
      });
      transport.onclose = () => {
        const id = transport.sessionId;
        if (id && transports.get(id) === transport) transports.delete(id);
        void server.close();
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    sendJsonError(res, 400, -32000, 'Bad Request: Missing session ID');
  }

  const httpServer = createServer(
    { requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 },
    (req, res) => {
      const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (pathname !== '/mcp') {
        sendJsonError(res, 404, -32000, 'Not Found');
        return;
      }
      const work = options.stateful ? handleStateful(req, res) : handleStateless(req, res);
      work.catch((err: unknown) => {
        if (!res.headersSent) sendJsonError(res, 500, -32603, `Internal server error: ${String(err)}`);
        else res.destroy();
      });
    },
  );
  const listening = await listenOnLoopback(httpServer);
  const { port } = listening;

  async function terminateAllSessions(): Promise<void> {
    const all = [...transports.values()];
    transports.clear();
    await Promise.allSettled(all.map((t) => t.close()));
  }

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessionCount: () => transports.size,
    terminateAllSessions,
    async close(): Promise<void> {
      await terminateAllSessions();
      await listening.close();
    },
  };
}

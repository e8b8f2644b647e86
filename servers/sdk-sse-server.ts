// A legacy HTTP+SSE (2024-11-05) MCP server built with the official SDK (McpServer +
// SSEServerTransport) on plain node:http. Test fixture code only.
//
//   GET  /sse                      -> a new SSEServerTransport (and session); endpoint /messages?sessionId=<id>
//   POST /messages?sessionId=<id>  -> transport.handlePostMessage(req, res, parsedBody)
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';
import { listenOnLoopback, readBody } from './listen.js';

export interface SdkSseServer {
  /** The SSE URL: http://127.0.0.1:<port>/sse */
  url: string;
  /** Open legacy sessions (one per GET stream). */
  sessionCount(): number;
  /** POSTs received, by JSON-RPC method (`initialize`, `tools/call`, …). */
  posts: string[];
  gets: number;
  /** Ends every stream from the server side (as a proxy closing idle connections would). */
  closeAllStreams(): Promise<void>;
  close(): Promise<void>;
}

function buildMcpServer(): McpServer {
  const server = new McpServer({ name: 'sdk-sse-fixture', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo the given text', inputSchema: { text: z.string() } },
    async ({ text }) => ({
      content: [{ type: 'text', text }],
    }),
  );
  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }),
  );
  return server;
}

function reply(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
}

export async function startSdkSseServer(): Promise<SdkSseServer> {
  const sessions = new Map<string, { transport: SSEServerTransport; server: McpServer }>();
  const posts: string[] = [];
  let gets = 0;

  async function handleGet(res: ServerResponse): Promise<void> {
    gets++;
    const transport = new SSEServerTransport('/messages', res);
    const server = buildMcpServer();
    sessions.set(transport.sessionId, { transport, server });
    res.on('close', () => {
      sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport); // starts the stream and sends the endpoint event
  }

  async function handlePost(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      reply(res, 400, 'Invalid JSON');
      return;
    }
    posts.push(
      typeof (body as { method?: unknown })?.method === 'string' ? (body as { method: string }).method : '(response)',
    );
    const session = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (!session) {
      reply(res, 404, 'Unknown session');
      return;
    }
    await session.transport.handlePostMessage(req, res, body);
  }

  const httpServer = createServer({ headersTimeout: 5_000, keepAliveTimeout: 5_000 }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let work: Promise<void>;
    if (req.method === 'GET' && url.pathname === '/sse') work = handleGet(res);
    else if (req.method === 'POST' && url.pathname === '/messages') work = handlePost(req, res, url);
    else {
      reply(res, url.pathname === '/sse' ? 405 : 404, 'Not supported');
      return;
    }
    work.catch((err: unknown) => {
      if (!res.headersSent) reply(res, 500, String(err));
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(httpServer);
  const { port } = listening;

  async function closeAllStreams(): Promise<void> {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(
      all.map(async ({ transport, server }) => {
        await transport.close();
        await server.close();
      }),
    );
  }

  return {
    url: `http://127.0.0.1:${port}/sse`,
    sessionCount: () => sessions.size,
    posts,
    get gets() {
      return gets;
    },
    closeAllStreams,
    async close(): Promise<void> {
      await closeAllStreams();
      await listening.close();
    },
  };
}

/**
 * MCP servers built with the official v2 server package (@modelcontextprotocol/server), as its
 * serving guide wires them, on plain node:http: modern-only (`legacy: 'reject'`), dual-era (the
 * default stateless legacy leg) and legacy-only (`legacyStatelessFallback` alone). Test fixture code.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { createMcpHandler, legacyStatelessFallback, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listenOnLoopback, type Listening } from '../../../servers/listen.js';

export type V2Mode = 'modern' | 'dual' | 'legacy';

export interface V2Server {
  url: string;
  /** Every request's method and MCP headers, in arrival order. */
  readonly seen: Array<{ method: string; headers: Record<string, string | undefined>; body: unknown }>;
  close(): Promise<void>;
}

function buildServer(name: string): McpServer {
  // Tools lists are fresh for a minute (SEP-2549 caching hints on the 2026-07-28 wire).
  const server = new McpServer(
    { name, version: '2.0.0' },
    { cacheHints: { 'tools/list': { ttlMs: 60_000, cacheScope: 'public' } } },
  );
  server.registerTool(
    'echo',
    { description: 'Echo the given text', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  // SEP-2243: `region` is mirrored into `Mcp-Param-Region`; the server checks it against the body.
  server.registerTool(
    'regional',
    {
      description: 'Answers with the region it was called for',
      inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }), query: z.string() }),
    },
    async ({ region }) => ({ content: [{ type: 'text', text: `region ${region}` }] }),
  );
  return server;
}

type FetchHandler = (request: Request) => Promise<Response>;

function handlerFor(mode: V2Mode, name: string): FetchHandler {
  const factory = () => buildServer(name);
  if (mode === 'legacy') return legacyStatelessFallback(factory);
  const handler = createMcpHandler(factory, { legacy: mode === 'modern' ? 'reject' : 'stateless' });
  return (request) => handler.fetch(request);
}

async function toRequest(req: IncomingMessage, origin: string, body: string | undefined): Promise<Request> {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(key, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(key, v);
  }
  return new Request(new URL(req.url ?? '/', origin), { method: req.method, headers, body });
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (!response.body) {
    res.end();
    return;
  }
  const stream = Readable.fromWeb(response.body);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startV2Server(mode: V2Mode, port = 0, name = `v2-${mode}`): Promise<V2Server> {
  const handle = handlerFor(mode, name);
  const seen: V2Server['seen'] = [];
  // The handler needs the origin, known once listening: requests only arrive after that.
  const where: { origin: string } = { origin: '' };
  const http = createServer((req, res) => {
    void (async () => {
      const text = req.method === 'POST' ? await readText(req) : undefined;
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      seen.push({
        method: req.method ?? '',
        headers: {
          'mcp-protocol-version': req.headers['mcp-protocol-version'] as string | undefined,
          'mcp-method': req.headers['mcp-method'] as string | undefined,
          'mcp-name': req.headers['mcp-name'] as string | undefined,
          'mcp-session-id': req.headers['mcp-session-id'] as string | undefined,
          'mcp-param-region': req.headers['mcp-param-region'] as string | undefined,
        },
        body,
      });
      const response = await handle(await toRequest(req, where.origin, text));
      await writeResponse(res, response);
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  const listening: Listening = await listenOnLoopback(http, port);
  where.origin = listening.origin;
  return { url: `${listening.origin}/mcp`, seen, close: () => listening.close() };
}

/**
 * MCP servers built with the official v2 server package (@modelcontextprotocol/server), as its
 * serving guide wires them, on plain node:http: modern-only (`legacy: 'reject'`), dual-era (the
 * default stateless legacy leg) and legacy-only (`legacyStatelessFallback` alone). Test fixture code.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import {
  createMcpHandler,
  legacyStatelessFallback,
  McpServer,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listenOnLoopback, type Listening } from '../../../servers/listen.js';

export type V2Mode = 'modern' | 'dual' | 'legacy';

export interface V2Server {
  url: string;
  /** Every request's method and MCP headers, in arrival order (`at`: when it arrived). */
  readonly seen: Array<{ method: string; headers: Record<string, string | undefined>; body: unknown; at?: number }>;
  /** Answers the next `times` requests of JSON-RPC `method` with this status and Retry-After. */
  busyFor?: { method: string; times: number; status: 429 | 503; retryAfter: string } | undefined;
  /** Adds a tool and publishes `notifications/tools/list_changed` to the open listens (modern leg). */
  addTool(name: string): void;
  /** Publishes `notifications/resources/updated` for `uri` to the listens subscribed to it (modern leg). */
  resourceUpdated(uri: string): void;
  close(): Promise<void>;
}

/** The one resource the servers offer, and can be subscribed to. */
export const CONFIG_URI = 'file:///project/config.json';

/** What the servers declare (default: list changes and resource subscriptions). */
export interface V2Capabilities {
  listChanged?: boolean;
  subscribe?: boolean;
}

function buildServer(name: string, extraTools: readonly string[], offer: V2Capabilities): McpServer {
  const listChanged = offer.listChanged ?? true;
  const capabilities = {
    tools: { listChanged },
    resources: { listChanged, subscribe: offer.subscribe ?? true },
  };
  // Tools lists are fresh for a minute (SEP-2549 caching hints on the 2026-07-28 wire).
  const cacheHints = { 'tools/list': { ttlMs: 60_000, cacheScope: 'public' as const } };
  const server = new McpServer({ name, version: '2.0.0' }, { capabilities, cacheHints });
  server.registerTool(
    'echo',
    { description: 'Echo the given text', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  for (const tool of extraTools)
    server.registerTool(tool, { description: `Added later: ${tool}` }, async () => ({
      content: [{ type: 'text', text: tool }],
    }));
  server.registerResource('config', CONFIG_URI, { mimeType: 'application/json' }, async (uri) => ({
    contents: [{ uri: uri.href, text: '{}' }],
  }));
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

/** What the default server declares, or a whole server of the test's own. */
export interface V2Options extends V2Capabilities {
  build?: (name: string) => McpServer;
}

type FetchHandler = (request: Request) => Promise<Response>;

interface Served {
  fetch: FetchHandler;
  notify: McpHttpHandler['notify'] | undefined;
}

function handlerFor(mode: V2Mode, name: string, extraTools: readonly string[], options: V2Options): Served {
  const { build } = options;
  const factory = build ? () => build(name) : () => buildServer(name, extraTools, options);
  if (mode === 'legacy') return { fetch: legacyStatelessFallback(factory), notify: undefined };
  const handler = createMcpHandler(factory, { legacy: mode === 'modern' ? 'reject' : 'stateless' });
  return { fetch: (request) => handler.fetch(request), notify: handler.notify };
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

/** `options.build` makes the McpServer (default: an `echo` tool, a resource, `addTool`'s tools). */
export async function startV2Server(
  mode: V2Mode,
  port = 0,
  name = `v2-${mode}`,
  options: V2Options = {},
): Promise<V2Server> {
  const extraTools: string[] = [];
  const served = handlerFor(mode, name, extraTools, options);
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
      seen.at(-1)!.at = Date.now();
      const busy = server.busyFor;
      if (busy && (body as { method?: unknown } | undefined)?.method === busy.method) {
        if (--busy.times <= 0) server.busyFor = undefined;
        res.writeHead(busy.status, { 'retry-after': busy.retryAfter }).end();
        return;
      }
      const response = await served.fetch(await toRequest(req, where.origin, text));
      await writeResponse(res, response);
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });
  const listening: Listening = await listenOnLoopback(http, port);
  where.origin = listening.origin;
  const server: V2Server = {
    url: `${listening.origin}/mcp`,
    seen,
    addTool(tool) {
      extraTools.push(tool);
      served.notify?.toolsChanged();
    },
    resourceUpdated: (uri) => served.notify?.resourceUpdated(uri),
    close: () => listening.close(),
  };
  return server;
}

/**
 * A hand-written modern (2026-07-28) Streamable HTTP server on node:http, for the SEP-2243
 * request headers and what goes with them: it answers `server/discover`, `tools/list` (the tools
 * and caching hints a test sets) and `tools/call`, records every POST with its headers, checks
 * `Mcp-Param-*` against the body as the spec's Server Validation says (400 -32020 otherwise),
 * answers `log` calls with the log messages `_meta` asked for, and leaves `hang` calls open,
 * noting whether the client closed their response stream. Test fixture code.
 */
import { createServer, type ServerResponse } from 'node:http';
import { listenOnLoopback, readBody, type Listening } from './listen.js';
import { formatSseEvent, startSse } from './sse-writer.js';

const VERSION = '2026-07-28';
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export interface SeenPost {
  method: string | undefined;
  id: unknown;
  headers: Record<string, string>;
  body: { params?: Record<string, unknown> & { _meta?: Record<string, unknown> } };
}

export interface ModernFixture {
  url: string;
  readonly seen: SeenPost[];
  /** What `tools/list` answers. */
  tools: Record<string, unknown>[];
  /** Caching hints on `tools/list`; `undefined` leaves a field out. */
  ttlMs: number | undefined;
  cacheScope: 'public' | 'private' | undefined;
  /** Check `Mcp-Param-*` headers (default true). */
  validateParams: boolean;
  /** Answer every `tools/call` with -32020 naming this header. */
  demand: string | undefined;
  /** Ids of `hang` calls whose response stream the client closed. */
  readonly closedStreams: unknown[];
  /** Resolves once a `hang` call arrived. */
  hanging(): Promise<void>;
  posts(method: string): SeenPost[];
  close(): Promise<void>;
}

function decode(value: string): string {
  const sentinel = /^=\?base64\?(.*)\?=$/.exec(value);
  return sentinel ? Buffer.from(sentinel[1]!, 'base64').toString('utf8') : value;
}

/** The first `x-mcp-header` (direct properties only: enough for the tests) whose header disagrees with the body. */
function paramMismatch(tool: Record<string, unknown> | undefined, args: unknown, headers: Record<string, string>) {
  const properties = (tool?.inputSchema as { properties?: Record<string, Record<string, unknown>> } | undefined)
    ?.properties;
  for (const [key, schema] of Object.entries(properties ?? {})) {
    const name = schema['x-mcp-header'];
    if (typeof name !== 'string') continue;
    const value = (args as Record<string, unknown> | undefined)?.[key];
    if (value === undefined || value === null) continue;
    const header = `Mcp-Param-${name}`;
    const sent = headers[header.toLowerCase()];
    if (sent === undefined) return `${header} header is missing`;
    // Strings as they are; integers and booleans as their JSON text (`42`, `true`).
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    if (decode(sent) !== text) return `${header} header value does not match body value`;
  }
  return undefined;
}

/** `keepSeen`: how many POSTs `seen` keeps (default all; the demo, which runs for hours, keeps none). */
export async function startModernFixture(
  tools: Record<string, unknown>[] = [],
  options: { keepSeen?: number } = {},
): Promise<ModernFixture> {
  let arrived: () => void = () => {};
  const hangingCall = new Promise<void>((resolve) => (arrived = resolve));
  const fixture = {
    url: '',
    seen: [] as SeenPost[],
    tools,
    ttlMs: undefined as number | undefined,
    cacheScope: undefined as 'public' | 'private' | undefined,
    validateParams: true,
    demand: undefined as string | undefined,
    closedStreams: [] as unknown[],
    hanging: () => hangingCall,
    posts: (method: string) => fixture.seen.filter((post) => post.method === method),
    close: async () => {},
  };

  function json(res: ServerResponse, status: number, message: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(message));
  }

  function toolsCall(res: ServerResponse, post: SeenPost): void {
    const { id, body } = post;
    const name = body.params?.name;
    const args = body.params?.arguments;
    const tool = fixture.tools.find((t) => t.name === name);
    const mismatch = fixture.demand
      ? `${fixture.demand} header is missing`
      : fixture.validateParams
        ? paramMismatch(tool, args, post.headers)
        : undefined;
    if (mismatch) {
      json(res, 400, { jsonrpc: '2.0', id, error: { code: -32020, message: `Header mismatch: ${mismatch}` } });
      return;
    }
    const result = { resultType: 'complete', content: [{ type: 'text', text: JSON.stringify(args ?? {}) }] };
    if (name === 'hang') {
      arrived();
      res.on('close', () => {
        if (!res.writableEnded) fixture.closedStreams.push(id);
      });
      startSse(res);
      return;
    }
    const level = body.params?._meta?.['io.modelcontextprotocol/logLevel'];
    if (name === 'log' && typeof level === 'string') {
      startSse(res);
      for (const at of LEVELS.slice(LEVELS.indexOf(level)).filter((l) => l === 'info' || l === 'error')) {
        const log = { jsonrpc: '2.0', method: 'notifications/message', params: { level: at, data: `${at} line` } };
        res.write(formatSseEvent({ data: JSON.stringify(log) }));
      }
      res.end(formatSseEvent({ data: JSON.stringify({ jsonrpc: '2.0', id, result }) }));
      return;
    }
    json(res, 200, { jsonrpc: '2.0', id, result });
  }

  const http = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const body = JSON.parse(await readBody(req)) as SeenPost['body'] & { method?: string; id?: unknown };
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[key] = value;
      const post: SeenPost = { method: body.method, id: body.id, headers, body };
      fixture.seen.push(post);
      if (options.keepSeen !== undefined && fixture.seen.length > options.keepSeen) fixture.seen.shift();
      if (body.id === undefined) return void res.writeHead(202).end();
      const hints = {
        ...(fixture.ttlMs === undefined ? {} : { ttlMs: fixture.ttlMs }),
        ...(fixture.cacheScope === undefined ? {} : { cacheScope: fixture.cacheScope }),
      };
      switch (body.method) {
        case 'server/discover':
          return json(res, 200, {
            jsonrpc: '2.0',
            id: body.id,
            result: {
              resultType: 'complete',
              supportedVersions: [VERSION],
              capabilities: { tools: {}, logging: {} },
              serverInfo: { name: 'modern-fixture', version: '1.0.0' },
              ttlMs: 0,
              cacheScope: 'public',
            },
          });
        case 'tools/list':
          return json(res, 200, {
            jsonrpc: '2.0',
            id: body.id,
            result: { resultType: 'complete', tools: fixture.tools, ...hints },
          });
        case 'tools/call':
          return toolsCall(res, post);
        default:
          return json(res, 404, { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } });
      }
    })().catch(() => res.destroy());
  });
  const listening: Listening = await listenOnLoopback(http);
  fixture.url = `${listening.origin}/mcp`;
  fixture.close = () => listening.close();
  return fixture;
}

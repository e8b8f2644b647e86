/**
 * An MCP server written the way most deployed servers were: copied from the official SDK's
 * Streamable HTTP examples of 2025 (a map of transports keyed by session id). After a restart it
 * answers an old session id with HTTP 400 "Bad Request: No valid session ID provided" on POST, and
 * 400 "Invalid or missing session ID" (plain text) on GET and DELETE, not the spec's 404.
 *
 * Controls for tests, the demo and the bench: `restart()` (all state gone, same port), `stop()` /
 * `start()` (connections refused meanwhile), `resetNextResponse(tool)` (the tool runs, then the
 * socket is destroyed before any answer: "outcome unknown"), `stallTools` (they run, then hang),
 * and counts of tool executions and of requests per JSON-RPC method, kept across restarts.
 * servers/fixture-process.ts runs it in a child process that a test can kill.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { listenOnLoopback, readBody, type Listening } from './listen.js';
import { SdkSessions } from './sdk-sessions.js';

export interface SdkExampleOptions {
  /** A new server and transport per request, no sessions (the SDK's stateless example). */
  stateless?: boolean;
  /** `enableJsonResponse` (application/json answers) instead of SSE. */
  jsonResponse?: boolean;
  /** Listen on this port (default: a free one, kept across restarts). */
  port?: number;
  /** 404 `Session not found` (the spec, and the SDK's examples since late 2025) instead of the 400s. */
  unknownSessionStatus?: 400 | 404;
  /** These tools run (and are counted), then never answer: a process that hangs mid-call. */
  stallTools?: string[];
  /** Told of every count as it happens (a child process forwards them to its parent). */
  onCount?: (kind: 'execution' | 'request', key: string) => void;
}

export interface SdkExampleServer {
  url: string;
  port: number;
  /** Tool executions so far, by tool (across restarts). */
  executions(): Record<string, number>;
  /** Requests so far, by JSON-RPC method (across restarts). */
  requests(): Record<string, number>;
  sessionCount(): number;
  /** What a process restart looks like to a client: every session and connection gone, same port. */
  restart(): Promise<void>;
  /** Stops listening and destroys every connection: connections are refused until `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The next call of `tool` runs, then its socket is destroyed before any answer. */
  resetNextResponse(tool: string): void;
  close(): Promise<void>;
}

interface Counts {
  executions: Record<string, number>;
  requests: Record<string, number>;
  resetNext: Set<string>;
  stall: ReadonlySet<string>;
  onCount: ((kind: 'execution' | 'request', key: string) => void) | undefined;
}

const NEVER = new Promise<never>(() => {});

function count(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

function buildServer(counts: Counts): McpServer {
  const server = new McpServer({ name: 'sdk-example', version: '1.0.0' });
  let counter = 0;
  const record = new Map<string, string>();
  /** Counts an execution; a stalled tool then never answers. */
  const ran = async (tool: string) => {
    count(counts.executions, tool);
    counts.onCount?.('execution', tool);
    if (counts.stall.has(tool)) await NEVER;
  };
  server.registerTool('echo', { description: 'Echo the text', inputSchema: { text: z.string() } }, async ({ text }) => {
    await ran('echo');
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool(
    'lookup',
    { description: 'Read a value', inputSchema: { key: z.string() }, annotations: { readOnlyHint: true } },
    async ({ key }) => {
      await ran('lookup');
      return { content: [{ type: 'text', text: record.get(key) ?? `no ${key}` }] };
    },
  );
  server.registerTool(
    'upsert',
    {
      description: 'Set a value',
      inputSchema: { key: z.string(), value: z.string() },
      annotations: { idempotentHint: true },
    },
    async ({ key, value }) => {
      await ran('upsert');
      record.set(key, value);
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  );
  server.registerTool('increment', { description: 'Add one to a counter (not idempotent)' }, async () => {
    await ran('increment');
    return { content: [{ type: 'text', text: String(++counter) }] };
  });
  return server;
}

function isInitialize(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
}

function sendJsonError(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

export async function startSdkExampleServer(options: SdkExampleOptions = {}): Promise<SdkExampleServer> {
  const counts: Counts = {
    executions: {},
    requests: {},
    resetNext: new Set(),
    stall: new Set(options.stallTools),
    onCount: options.onCount,
  };
  const sessions = new SdkSessions();
  let http: Listening | undefined;
  let port = options.port ?? 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    if (req.method !== 'POST') {
      // As in the SDK's examples of 2025: an unknown session on GET or DELETE is a plain-text 400.
      if (options.stateless) return sendJsonError(res, 405, 'Method not allowed.');
      const transport = sessions.get(sessionId);
      if (!transport && sessionId !== undefined && options.unknownSessionStatus === 404) {
        return sendJsonError(res, 404, 'Session not found', -32001);
      }
      if (!transport) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('Invalid or missing session ID');
        return;
      }
      await transport.handleRequest(req, res);
      return;
    }
    const body = JSON.parse(await readBody(req)) as { method?: string; params?: { name?: string } };
    if (typeof body.method === 'string') {
      count(counts.requests, body.method);
      options.onCount?.('request', body.method);
    }
    const tool = body.method === 'tools/call' ? body.params?.name : undefined;
    if (tool !== undefined && counts.resetNext.delete(tool)) {
      // The tool runs; the answer never leaves: the socket dies first.
      res.write = () => true;
      res.end = () => {
        req.socket.destroy();
        return res;
      };
    }
    if (options.stateless) {
      const server = buildServer(counts);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: options.jsonResponse ?? false,
      });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    let transport = sessions.get(sessionId);
    if (!transport && sessionId === undefined && isInitialize(body)) {
      const created = sessions.create({ enableJsonResponse: options.jsonResponse ?? false });
      await buildServer(counts).connect(created);
      transport = created;
    }
    if (!transport && sessionId !== undefined && options.unknownSessionStatus === 404) {
      return sendJsonError(res, 404, 'Session not found', -32001);
    }
    if (!transport) return sendJsonError(res, 400, 'Bad Request: No valid session ID provided');
    await transport.handleRequest(req, res, body);
  }

  /** Start, stop and restart run one at a time (the demo's faults may overlap). */
  let queue: Promise<void> = Promise.resolve();
  const serially = (step: () => Promise<void>): Promise<void> => (queue = queue.then(step, step));

  async function start(): Promise<void> {
    if (http) return;
    const server = createServer((req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) sendJsonError(res, 500, 'Internal server error');
        else res.destroy();
      });
    });
    const listening = await listenOnLoopback(server, port);
    port = listening.port;
    http = listening;
  }

  async function stop(): Promise<void> {
    const listening = http;
    http = undefined;
    await sessions.closeAll();
    await listening?.close();
  }

  await serially(start);
  return {
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    get port() {
      return port;
    },
    executions: () => ({ ...counts.executions }),
    requests: () => ({ ...counts.requests }),
    sessionCount: () => sessions.size,
    restart: () =>
      serially(async () => {
        await stop();
        await start();
      }),
    stop: () => serially(stop),
    start: () => serially(start),
    resetNextResponse: (tool) => void counts.resetNext.add(tool),
    close: () => serially(stop),
  };
}

/**
 * An MCP server built with the official SDK (McpServer + StreamableHTTPServerTransport, stateful,
 * SSE answers) that keeps per-session state a client establishes and must get back on a new
 * session: resource subscriptions, the logging level, and the client's roots. Tests read that
 * state per session, end every session (`expireSessions()`: the next request gets 404) or
 * restart the whole server on the same port (`restart()`), and can make it answer a method with
 * a malformed result (`malformed`) or an error (`refused`).
 *
 * Tools: `touch {uri}` sends `notifications/resources/updated` for `uri` if this session
 * subscribed to it; `log {level, data}` sends a log message if the session's level lets it
 * through; `roots` asks the client for its roots (`roots/list`) and answers with them as JSON;
 * `weather` declares an outputSchema; `announce-tools-changed` sends `notifications/tools/list_changed`. All notifications ride on the call's own SSE stream,
 * before its answer, so a test can rely on their order.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { listenOnLoopback, readBody, type Listening } from './listen.js';
import { SdkSessions } from './sdk-sessions.js';

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export interface SessionRecord {
  id: string;
  subscriptions: Set<string>;
  level: string | undefined;
  /** `notifications/roots/list_changed` received on this session. */
  rootsChanged: number;
  /** Methods received on this session, in order. */
  methods: string[];
}

export interface StateServer {
  readonly url: string;
  /** Every session so far (across restarts), oldest first. */
  sessions: SessionRecord[];
  /** The newest session. */
  latest(): SessionRecord | undefined;
  /** Answer the next requests of a method with this raw result (not checked by the SDK). */
  malformed: Map<string, unknown>;
  /** Answer the next requests of a method with a JSON-RPC error carrying this message. */
  refused: Map<string, string>;
  /** Ends every session: requests that carry an old session id get 404. */
  expireSessions(): Promise<void>;
  /** Every session and connection gone, then listening again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

function buildServer(record: SessionRecord): McpServer {
  const server = new McpServer(
    { name: 'sdk-state', version: '1.0.0' },
    { capabilities: { logging: {}, resources: { subscribe: true } } },
  );
  server.registerResource('note', 'memo://note', { mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, text: 'a note' }],
  }));
  server.registerResource('other', 'memo://other', { mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, text: 'another note' }],
  }));
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    record.subscriptions.add(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    record.subscriptions.delete(request.params.uri);
    return {};
  });
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    record.level = request.params.level;
    return {};
  });
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    record.rootsChanged++;
  });
  server.registerTool('touch', { inputSchema: { uri: z.string() } }, async ({ uri }, extra) => {
    if (record.subscriptions.has(uri))
      await extra.sendNotification({ method: 'notifications/resources/updated', params: { uri } });
    return { content: [{ type: 'text', text: 'touched' }] };
  });
  server.registerTool(
    'log',
    { inputSchema: { level: z.string(), data: z.string() } },
    async ({ level, data }, extra) => {
      const threshold = LEVELS.indexOf(record.level ?? 'debug');
      if (LEVELS.indexOf(level) >= threshold)
        await extra.sendNotification({ method: 'notifications/message', params: { level, data } } as never);
      return { content: [{ type: 'text', text: 'logged' }] };
    },
  );
  server.registerTool('announce-tools-changed', {}, async (extra) => {
    await extra.sendNotification({ method: 'notifications/tools/list_changed' });
    return { content: [{ type: 'text', text: 'announced' }] };
  });
  server.registerTool('roots', {}, async () => {
    const { roots } = await server.server.listRoots();
    return { content: [{ type: 'text', text: JSON.stringify(roots) }] };
  });
  server.registerTool(
    'weather',
    {
      inputSchema: { city: z.string() },
      outputSchema: { temperature: z.number(), conditions: z.string() },
    },
    ({ city }) => {
      const structuredContent = { temperature: city.length, conditions: 'clear' };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  return server;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

export async function startStateServer(): Promise<StateServer> {
  const transports = new SdkSessions();
  const records = new Map<string, SessionRecord>();
  const sessions: SessionRecord[] = [];
  const malformed = new Map<string, unknown>();
  const refused = new Map<string, string>();
  let http: Listening | undefined;
  let port = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    const known = transports.get(sessionId);
    if (sessionId !== undefined && !known) {
      return sendJson(res, 404, { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    }
    if (req.method !== 'POST') {
      if (!known)
        return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null });
      return known.handleRequest(req, res);
    }
    const body = JSON.parse(await readBody(req)) as { id?: unknown; method?: string };
    if (sessionId !== undefined && typeof body.method === 'string') records.get(sessionId)?.methods.push(body.method);
    if (known && typeof body.method === 'string' && malformed.has(body.method)) {
      return sendJson(res, 200, { jsonrpc: '2.0', id: body.id, result: malformed.get(body.method) });
    }
    if (known && typeof body.method === 'string' && refused.has(body.method)) {
      const message = refused.get(body.method)!;
      return sendJson(res, 200, { jsonrpc: '2.0', id: body.id, error: { code: -32603, message } });
    }
    if (known) return known.handleRequest(req, res, body);
    if (body.method !== 'initialize') {
      return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null });
    }
    const record: SessionRecord = { id: '', subscriptions: new Set(), level: undefined, rootsChanged: 0, methods: [] };
    const transport = transports.create({
      onInitialized: (id) => {
        record.id = id;
        records.set(id, record);
        sessions.push(record);
      },
    });
    await buildServer(record).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function start(): Promise<void> {
    const server = createServer((req, res) => {
      handle(req, res).catch(() => (res.headersSent ? res.destroy() : sendJson(res, 500, { error: 'internal' })));
    });
    const listening = await listenOnLoopback(server, port);
    port = listening.port;
    http = listening;
  }

  async function stop(): Promise<void> {
    await transports.closeAll();
    const listening = http;
    http = undefined;
    await listening?.close();
  }

  await start();
  return {
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    sessions,
    latest: () => sessions.at(-1),
    malformed,
    refused,
    expireSessions: () => transports.closeAll(),
    async restart() {
      await stop();
      await start();
    },
    close: stop,
  };
}

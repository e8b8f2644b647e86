/**
 * The bench's minimal MCP servers (node:http, no SDK), run in a child process so the clients
 * under test own the bench process's CPU and heap. Prints `{"port":N}` when listening.
 *
 *   --mode json|sse   Streamable HTTP: POST answers as application/json or as a one-event SSE stream
 *   --mode legacy     legacy HTTP+SSE (2024-11-05): GET /sse stream + POST /messages?sessionId=
 *   --mode dual       both eras on one implementation (json responses): a request whose `_meta` names a
 *                     modern version is answered statelessly (2026-07-28: no session, no GET stream);
 *                     `initialize` opens a 2025-era session as in json mode
 *   --port N          listen on N (default: any free port; the scale bench restarts a process on its port)
 *   POST /__expire    forgets every session (the next request on one gets 404)
 *   GET /__stats      per path: POSTs with and without a session id, modern POSTs, GET streams opened
 *   GET /__streams    `{"open":N}`: the Streamable HTTP GET streams open now
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';

const argv = process.argv.slice(2);
const mode = argv[argv.indexOf('--mode') + 1] ?? 'json';
const port = argv.includes('--port') ? Number(argv[argv.indexOf('--port') + 1]) : 0;
const RESULT = { content: [{ type: 'text', text: 'ok' }] };
/** A 2026-07-28 result must say it is complete (SEP-2322); 2025-era results have no `resultType`. */
const MODERN_RESULT = { ...RESULT, resultType: 'complete' };
const sessions = new Set<string>();
const MODERN_VERSIONS = ['2026-07-28'];
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';

interface PathStats {
  posts: number;
  withSession: number;
  modern: number;
  getStreams: number;
}
const stats = new Map<string, PathStats>();
let openStreams = 0;
const statsOf = (req: IncomingMessage): PathStats => {
  const path = (req.url ?? '/').split('?')[0]!;
  let entry = stats.get(path);
  if (!entry) stats.set(path, (entry = { posts: 0, withSession: 0, modern: 0, getStreams: 0 }));
  return entry;
};
const legacyStreams = new Map<string, ServerResponse>();
const SESSION_NOT_FOUND = '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}';
const SESSION_NOT_FOUND_HEADERS = {
  'content-type': 'application/json',
  'content-length': String(Buffer.byteLength(SESSION_NOT_FOUND)),
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

interface Message {
  id?: number | string;
  method?: string;
  params?: { protocolVersion?: string; _meta?: Record<string, unknown> };
}

function answer(message: Message, modern = false): object {
  if (message.method === 'initialize') {
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: {
        protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'bench', version: '1.0.0' },
      },
    };
  }
  if (message.method === 'server/discover') {
    return {
      jsonrpc: '2.0',
      id: message.id,
      result: {
        resultType: 'complete',
        supportedVersions: MODERN_VERSIONS,
        capabilities: { tools: {} },
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'bench', version: '1.0.0' } },
      },
    };
  }
  if (message.method === 'tools/call')
    return { jsonrpc: '2.0', id: message.id, result: modern ? MODERN_RESULT : RESULT };
  if (message.method === 'tools/list')
    return { jsonrpc: '2.0', id: message.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } };
  if (message.method === 'ping') return { jsonrpc: '2.0', id: message.id, result: {} };
  return { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } };
}

function reply(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(status, headers).end(text);
}

/**
 * A 2026-07-28 request: no session; the version in `_meta` must be one we speak (else -32022),
 * and the `MCP-Protocol-Version` / `Mcp-Method` headers must agree with the body (else -32020).
 */
function modern(message: Message, version: unknown, req: IncomingMessage, res: ServerResponse): void {
  if (!MODERN_VERSIONS.includes(String(version)))
    return reply(res, 400, {
      jsonrpc: '2.0',
      id: message.id ?? null,
      error: { code: -32022, message: 'Unsupported protocol version', data: { supported: MODERN_VERSIONS } },
    });
  if (req.headers['mcp-protocol-version'] !== version || req.headers['mcp-method'] !== message.method)
    return reply(res, 400, {
      jsonrpc: '2.0',
      id: message.id ?? null,
      error: { code: -32020, message: 'MCP headers do not match the body' },
    });
  if (message.id === undefined) return void res.writeHead(202).end();
  reply(res, 200, answer(message, true));
}

async function streamable(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sid = req.headers['mcp-session-id'] as string | undefined;
  const counted = statsOf(req);
  if (req.method === 'GET') {
    if (!sid || !sessions.has(sid)) return void res.writeHead(mode === 'dual' ? 405 : 404).end();
    counted.getStreams++;
    openStreams++;
    res.once('close', () => openStreams--);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': open\n\n');
    return;
  }
  if (req.method === 'DELETE') {
    if (sid) sessions.delete(sid);
    return void res.writeHead(200).end();
  }
  const message = JSON.parse(await readBody(req)) as Message;
  counted.posts++;
  if (sid) counted.withSession++;
  const version = message.params?._meta?.[META_VERSION];
  if (mode === 'dual' && !sid && version !== undefined && message.method !== 'initialize') {
    counted.modern++;
    return modern(message, version, req, res);
  }
  const headers: Record<string, string> = {};
  if (message.method === 'initialize') {
    const id = randomUUID();
    sessions.add(id);
    headers['mcp-session-id'] = id;
  } else if (!sid || !sessions.has(sid)) {
    // Also the answer to the era probe (`server/discover`) at every start, its length declared like most frameworks do.
    return void res.writeHead(404, SESSION_NOT_FOUND_HEADERS).end(SESSION_NOT_FOUND);
  }
  if (message.id === undefined) return void res.writeHead(202).end();
  if (mode !== 'sse') return reply(res, 200, answer(message), headers);
  headers['content-type'] = 'text/event-stream';
  res.writeHead(200, headers).end(`event: message\ndata: ${JSON.stringify(answer(message))}\n\n`);
}

async function legacy(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'GET') {
    const id = randomUUID();
    legacyStreams.set(id, res);
    res.on('close', () => legacyStreams.delete(id));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
    return;
  }
  const stream = legacyStreams.get(url.searchParams.get('sessionId') ?? '');
  if (req.method !== 'POST' || !stream) return void res.writeHead(404).end();
  const message = JSON.parse(await readBody(req));
  res.writeHead(202).end();
  if (message.id !== undefined) stream.write(`event: message\ndata: ${JSON.stringify(answer(message))}\n\n`);
}

const server = createServer((req, res) => {
  if (req.url === '/__expire') {
    sessions.clear();
    return void res.writeHead(200).end();
  }
  if (req.url === '/__stats') return reply(res, 200, Object.fromEntries(stats));
  if (req.url === '/__streams') return reply(res, 200, { open: openStreams });
  (mode === 'legacy' ? legacy(req, res) : streamable(req, res)).catch(() => res.writeHead(500).end());
});
server.keepAliveTimeout = 60_000;
// 0.0.0.0: the idle-connection test reaches it as 127.0.0.1..127.0.0.4 (one origin, one client pool, per 100 connections).
server.listen(port, '0.0.0.0', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});

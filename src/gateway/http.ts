/**
 * The gateway over Streamable HTTP, secure by default: bound to 127.0.0.1, a bearer token on
 * every request unless auth is turned off explicitly, `Host` and `Origin` checked against the
 * loopback names (DNS rebinding). 2025-era clients get sessions (the SDK's streamable HTTP
 * transport, one per session, a GET stream for list changes and the servers' requests);
 * 2026-07-28 clients are served per request by the SDK's handler (`subscriptions/listen` for
 * changes). The era is read from each request, as the SDK classifies it.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  WebStandardStreamableHTTPServerTransport,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { BoundedEventStore } from './event-store.js';
import type { Gateway } from './gateway.js';

const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MCP_PATH = '/mcp';

export interface HttpServiceOptions {
  host?: string | undefined;
  port?: number | undefined;
  /** The bearer token hosts must send; none: auth is off (only when the user said so). */
  token: string | undefined;
  /** Extra allowed `Origin` / `Host` names beyond loopback (e.g. a LAN name when bound elsewhere). */
  allowedHosts?: readonly string[] | undefined;
}

export interface HttpService {
  url: string;
  close(): Promise<void>;
}

/** A token for `--http` when none was given: 256 bits, URL-safe. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export async function serveGatewayHttp(gateway: Gateway, options: HttpServiceOptions): Promise<HttpService> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const modern: McpHttpHandler = createMcpHandler(() => gateway.createServer(), { legacy: 'reject' });
  gateway.sessions.addNotifier(modern.notify);
  const hostnames = [...localhostAllowedHostnames(), ...(options.allowedHosts ?? [])];
  const origins = [...localhostAllowedOrigins(), ...(options.allowedHosts ?? [])];
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);

  const legacy = async (request: Request, body: unknown): Promise<Response> => {
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const transport = sessions.get(id);
      if (!transport) return rpcError(404, -32001, 'Session not found');
      return transport.handleRequest(request, { parsedBody: body });
    }
    if (request.method !== 'POST' || !isInitialize(body))
      return rpcError(400, -32000, 'Bad Request: no valid session id (Mcp-Session-Id) was given');
    const server = gateway.createServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new BoundedEventStore(),
      retryInterval: 1_000,
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      onsessionclosed: (sessionId) => void sessions.delete(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      gateway.sessions.remove(server);
    };
    await server.connect(transport);
    gateway.sessions.add(server);
    return transport.handleRequest(request, { parsedBody: body });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) return send(res, new Response('Not Found', { status: 404 }));
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method,
      headers,
      signal: abort.signal,
    });
    const refused =
      hostHeaderValidationResponse(request, hostnames) ??
      originValidationResponse(request, origins) ??
      unauthorized(request, expected);
    if (refused) return send(res, refused);
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req);
      if ('error' in read) return send(res, read.error);
      body = read.body;
    }
    // A session id is a 2025 session's (the modern era has none): no need to classify the body.
    const response =
      req.headers['mcp-session-id'] !== undefined || (await isLegacyRequest(request, body))
        ? await legacy(request, body)
        : await modern.fetch(request, { parsedBody: body });
    await send(res, response);
  };

  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`gateway error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}${MCP_PATH}`,
    close: async () => {
      await modern.close();
      await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function unauthorized(request: Request, expected: Buffer | undefined): Response | undefined {
  if (!expected) return undefined;
  const given = Buffer.from(request.headers.get('authorization') ?? '');
  if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
  return new Response(
    JSON.stringify({ error: 'invalid_token', error_description: 'a valid bearer token is required' }),
    {
      status: 401,
      headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' },
    },
  );
}

function isInitialize(body: unknown): boolean {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  return typeof first === 'object' && first !== null && (first as { method?: unknown }).method === 'initialize';
}

function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** The body as JSON, bounded; a body that is not JSON is the SDK's to refuse (parse error). */
async function readJson(req: IncomingMessage): Promise<{ body: unknown } | { error: Response }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { error: new Response('Payload Too Large', { status: 413 }) };
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { error: rpcError(400, -32700, 'Parse error: the body is not JSON') };
  }
}

/** A web Response onto Node's response: a JSON body in one write, an SSE stream as it comes. */
async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  if (!response.body) return void res.writeHead(response.status, headers).end();
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(body.length);
    return void res.writeHead(response.status, headers).end(body);
  }
  res.writeHead(response.status, headers);
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the host went away, or the stream was cancelled
  }
  res.end();
}

/**
 * The gateway over Streamable HTTP, secure by default: bound to 127.0.0.1, a bearer token on
 * every request unless auth is turned off explicitly, `Host` and `Origin` checked against the
 * loopback names (DNS rebinding). 2025-era clients get sessions (the SDK's streamable HTTP
 * transport, one per session, a GET stream for list changes and the servers' requests);
 * 2026-07-28 clients are served per request by the SDK's handler (`subscriptions/listen` for
 * changes). The era is read from each request, as the SDK classifies it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  validateHostHeader,
  validateOriginHeader,
  type JSONRPCRequest,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { CallSignal } from './call-signal.js';
import type { Gateway } from './gateway.js';
import { HttpSessions } from './http-sessions.js';
import { PROBE_PATHS, serveProbe, type ProbeContext } from './probes.js';
import { type SessionTransport, writeJson } from './session-transport.js';
import { isObject } from '../core/is-object.js';
import { describeError } from '../core/errors.js';

const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MCP_PATH = '/mcp';

export interface HttpServiceOptions {
  host?: string | undefined;
  port?: number | undefined;
  /**
   * A listening socket this process inherited (systemd's socket activation, or `serve --reload`'s
   * predecessor), by its file descriptor: used instead of `host` and `port`. The socket outlives
   * each process, so a restart never refuses a connection (they wait in its backlog).
   */
  fd?: number | undefined;
  /** The bearer token hosts must send; none: auth is off (only when the user said so). */
  token: string | undefined;
  /** Extra allowed `Origin` / `Host` names beyond loopback (e.g. a LAN name when bound elsewhere). */
  allowedHosts?: readonly string[] | undefined;
  /**
   * A 2025 host session with no request open (no GET stream either) for this long is closed, its
   * memory freed and its record in the store forgotten. Default 30 min; 0: never.
   */
  sessionIdleMs?: number | undefined;
  /**
   * A session id found neither in memory nor in the store is answered 404 `Session not found`, as
   * the spec says, instead of adopted (re-created from the request). Default false: real hosts
   * never initialize again after a 404 (http-sessions.ts).
   */
  strictSessions?: boolean | undefined;
  /**
   * tools/call and the lists answered without an SDK server instance (direct-path.ts). Default
   * true; false serves every request through the SDK's server (the bench's A/B, the tests' reference).
   */
  directPath?: boolean | undefined;
  /** `GET /metrics`: Prometheus text (the OpenTelemetry exporter's handler); none: 404. */
  metrics?: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

export interface HttpService {
  url: string;
  /** The listening socket's descriptor (handed to a successor by `serve --reload`). */
  fd(): number | undefined;
  close(): Promise<void>;
  /**
   * Stops taking connections and new sessions, ends the hosts' GET streams (they reconnect, to
   * another process), lets the requests in flight finish within `ms`, then closes. The sessions'
   * records stay in the store for whoever serves them next.
   */
  drain(ms: number): Promise<void>;
}

/** A token for `--http` when none was given: 256 bits, URL-safe. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export async function serveGatewayHttp(gateway: Gateway, options: HttpServiceOptions): Promise<HttpService> {
  const modern: McpHttpHandler = createMcpHandler(() => gateway.createServer(), { legacy: 'reject' });
  gateway.sessions.addNotifier(modern.notify);
  const names: AllowedNames = {
    hostnames: [...localhostAllowedHostnames(), ...(options.allowedHosts ?? [])],
    origins: [...localhostAllowedOrigins(), ...(options.allowedHosts ?? [])],
    acceptedHosts: new Set(),
    acceptedOrigins: new Set(),
  };
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
  const directPath = options.directPath === false ? undefined : gateway.directPath();
  const sessions = new HttpSessions(gateway, {
    idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    strict: options.strictSessions ?? false,
    directPath,
  });
  const taskListens = gateway.taskListens();

  const legacy = async (request: Request, body: unknown): Promise<Response> => {
    const id = request.headers.get('mcp-session-id');
    // A host's initialize that still names an old session starts a new one.
    if (id !== null && !(request.method === 'POST' && isInitialize(body))) {
      const transport = sessions.get(id) ?? (await takeUp(id, request));
      if (transport instanceof Response) return transport;
      return transport.web.handleRequest(request, { parsedBody: body });
    }
    if (request.method !== 'POST' || !isInitialize(body))
      return rpcError(400, -32000, 'Bad Request: no valid session id (Mcp-Session-Id) was given');
    if (draining) return rpcError(503, -32000, 'the gateway is restarting: try again', { 'retry-after': '1' });
    const transport = await sessions.open(body);
    return transport.web.handleRequest(request, { parsedBody: body });
  };

  /** A session id this process does not hold: restored or adopted (http-sessions.ts), or 404. */
  const takeUp = async (id: string, request: Request): Promise<SessionTransport | Response> => {
    if (request.method === 'DELETE')
      return (await sessions.endElsewhere(id))
        ? new Response(null, { status: 200 })
        : rpcError(404, -32001, 'Session not found');
    return (
      (await sessions.takeUp(id, request.headers.get('mcp-protocol-version'))) ??
      rpcError(404, -32001, 'Session not found')
    );
  };

  let draining = false;
  /** Requests of `/mcp` not answered yet; the drain waits for none. */
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const requestEnded = (): void => {
    if (--inFlight === 0) drained?.();
  };
  /** The 2026-07-28 listens open now: ended when draining (their hosts listen again elsewhere). */
  const streams = new Set<ServerResponse>();
  const probes: ProbeContext = {
    gateway,
    draining: () => draining,
    sessions: () => sessions.size,
    metrics: options.metrics,
  };

  // Its failure is caught here, not by a `.catch` closure and promise per request.
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const path = req.url ?? '/';
      const query = path.indexOf('?');
      const pathname = query < 0 ? path : path.slice(0, query);
      if (pathname !== MCP_PATH) {
        if (!PROBE_PATHS.has(pathname)) return void res.writeHead(404).end('Not Found');
        const refused = refusal(req, names, undefined);
        if (refused) return await send(res, refused);
        return await serveProbe(pathname, req, res, probes);
      }
      const refused = refusal(req, names, expected);
      if (refused) return await send(res, refused);
      // Draining: every answer closes its connection, so that the host's next one goes elsewhere.
      if (draining) {
        res.shouldKeepAlive = false;
        if (req.method === 'GET')
          return await send(res, rpcError(503, -32000, 'the gateway is restarting: reconnect', { 'retry-after': '1' }));
      }
      inFlight++;
      res.on('close', requestEnded);
      let body: unknown;
      if (req.method === 'POST') {
        const read = await readJson(req);
        if ('error' in read) return await send(res, read.error);
        body = read.body;
      }
      const session = sessionOf(req, sessions);
      if (session) busy(session, res);
      // The common call of a 2025 session: straight onto Node's response (session-transport.ts).
      const direct = session && directRequest(req, body, session);
      if (direct) return session.post(direct, res, req.headers['mcp-protocol-version'] as string);
      // The host closing its request cancels it (the spec's cancellation in 2026-07-28).
      const cancel = new CallSignal();
      (res as Tracked)[CANCEL] = cancel;
      res.on('close', cancelUnfinished);
      // The common 2026-07-28 request: answered as JSON straight onto Node's response (direct-path.ts).
      const modernEra = req.headers['mcp-session-id'] === undefined && namesModernEra(req, body);
      if (modernEra && isListen(body)) {
        streams.add(res);
        res.once('close', () => streams.delete(res));
      }
      if (modernEra && taskListens.serve(req, res, body)) return;
      const answer = modernEra ? directPath?.modern(req, body, cancel.signal) : undefined;
      const answered = answer && (await answer);
      if (answered) return writeJson(res, answered);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      const request = new Request(`http://${req.headers.host ?? 'localhost'}${path}`, {
        method: req.method,
        headers,
        signal: cancel.linked(),
      });
      // A session id is a 2025 session's (the modern era has none); a request or notification with a
      // modern MCP-Protocol-Version header is the modern handler's to serve or refuse: no need to
      // classify the body twice.
      const response =
        req.headers['mcp-session-id'] !== undefined || (!modernEra && (await isLegacyRequest(request, body)))
          ? await legacy(request, body)
          : await modern.fetch(request, { parsedBody: body });
      await send(res, response);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`gateway error: ${describeError(error)}`);
    }
  };

  const server: HttpServer = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (options.fd !== undefined) server.listen({ fd: options.fd }, () => resolve());
    else server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const close = async () => {
    taskListens.close();
    await modern.close();
    await sessions.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://${host}:${address.port}${MCP_PATH}`,
    // Node keeps the descriptor on its handle only (`_handle.fd`, on Unix).
    fd: () => (server as unknown as { _handle?: { fd?: number } })._handle?.fd,
    close,
    drain: async (ms) => {
      draining = true;
      server.close();
      server.closeIdleConnections();
      sessions.endStreams();
      for (const res of streams) res.destroy();
      taskListens.close();
      if (inFlight > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          drained = resolve;
          timer = setTimeout(resolve, ms);
        });
        clearTimeout(timer);
      }
      await close();
    },
  };
}

/**
 * Host and Origin checked against the allowed names (DNS rebinding), then the bearer token. A
 * Host or Origin value once accepted is remembered (a host sends the same one every time): the
 * SDK's check parses it as a URL, the largest part of this check per request.
 */
function refusal(req: IncomingMessage, names: AllowedNames, expected: Buffer | undefined): Response | undefined {
  const hostHeader = req.headers.host;
  if (hostHeader === undefined || !names.acceptedHosts.has(hostHeader)) {
    const host = validateHostHeader(hostHeader, names.hostnames);
    if (!host.ok) return rpcError(403, -32000, host.message);
    remember(names.acceptedHosts, hostHeader!);
  }
  const originHeader = req.headers.origin;
  if (originHeader !== undefined && !names.acceptedOrigins.has(originHeader)) {
    const origin = validateOriginHeader(originHeader, names.origins);
    if (!origin.ok) return rpcError(403, -32000, origin.message);
    remember(names.acceptedOrigins, originHeader);
  }
  if (!expected) return undefined;
  const given = Buffer.from(req.headers.authorization ?? '');
  if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
  return new Response(
    JSON.stringify({ error: 'invalid_token', error_description: 'a valid bearer token is required' }),
    {
      status: 401,
      headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' },
    },
  );
}

interface AllowedNames {
  hostnames: string[];
  origins: string[];
  /** Host and Origin values already accepted; at most MAX_ACCEPTED each. */
  acceptedHosts: Set<string>;
  acceptedOrigins: Set<string>;
}

const MAX_ACCEPTED = 64;

function remember(accepted: Set<string>, value: string): void {
  if (accepted.size >= MAX_ACCEPTED) accepted.clear();
  accepted.add(value);
}

/**
 * A POST the session transport serves directly: one JSON-RPC request (not initialize) of a known
 * session, with the headers the web transport would accept. Anything else takes the SDK's path, which answers it or says why not.
 */
function directRequest(req: IncomingMessage, body: unknown, session: SessionTransport): JSONRPCRequest | undefined {
  if (req.method !== 'POST' || typeof body !== 'object' || body === null) return undefined;
  const message = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { _meta?: object } };
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string' || message.method === 'initialize')
    return undefined;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return undefined;
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!req.headers['content-type']?.includes('application/json')) return undefined;
  const version = req.headers['mcp-protocol-version'];
  if (Array.isArray(version) || !session.acceptsVersion(version)) return undefined;
  return body as JSONRPCRequest;
}

function sessionOf(req: IncomingMessage, sessions: HttpSessions): SessionTransport | undefined {
  const id = req.headers['mcp-session-id'];
  return typeof id === 'string' ? sessions.get(id) : undefined;
}

/** What a response's `close` listeners need, kept on the response: no closure per request. */
const CANCEL = Symbol('cancel');
const SESSION = Symbol('session');
interface Tracked extends ServerResponse {
  [CANCEL]?: CallSignal;
  [SESSION]?: SessionTransport;
}

/** A request of the session is open until its response closes: the session is not idle meanwhile. */
function busy(session: SessionTransport, res: ServerResponse): void {
  session.open++;
  (res as Tracked)[SESSION] = session;
  res.on('close', sessionRequestClosed);
}

function sessionRequestClosed(this: Tracked): void {
  const session = this[SESSION]!;
  session.open--;
  session.lastSeen = Date.now();
  session.onUsed?.(session.lastSeen);
}

/** The host closed its request before the answer was written: the call is cancelled. */
function cancelUnfinished(this: Tracked): void {
  if (!this.writableFinished) this[CANCEL]!.abort();
}

/** A single JSON-RPC request or notification whose header names 2026-07-28 or later: never 2025-era traffic. */
function namesModernEra(req: IncomingMessage, body: unknown): boolean {
  const version = req.headers['mcp-protocol-version'];
  if (req.method !== 'POST' || typeof version !== 'string' || version.trim() < '2026') return false;
  return isObject(body) && 'method' in body;
}

function isInitialize(body: unknown): boolean {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  return typeof first === 'object' && first !== null && (first as { method?: unknown }).method === 'initialize';
}

function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function isListen(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'subscriptions/listen';
}

type BodyRead = { body: unknown } | { error: Response };

/** A body being read: kept on its request, so the listeners are shared functions, not closures per request. */
const BODY = Symbol('body');
interface Reading extends IncomingMessage {
  [BODY]?: { chunks: Buffer[]; size: number; resolve: (read: BodyRead) => void };
}

/** The body as JSON, bounded; a body that is not JSON is refused (parse error). Events, not an async iterator: cheaper per request. */
function readJson(req: IncomingMessage): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    (req as Reading)[BODY] = { chunks: [], size: 0, resolve };
    // `on`, not `once`: 'end' comes once, and a late 'error' after it finds its listener still there.
    req.on('data', onBodyData).on('end', onBodyEnd).on('error', reject);
  });
}

function onBodyData(this: Reading, chunk: Buffer): void {
  const read = this[BODY]!;
  read.size += chunk.length;
  if (read.size <= MAX_BODY_BYTES) return void read.chunks.push(chunk);
  this.off('data', onBodyData).off('end', onBodyEnd).resume();
  read.resolve({ error: new Response('Payload Too Large', { status: 413 }) });
}

function onBodyEnd(this: Reading): void {
  const { chunks, resolve } = this[BODY]!;
  const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
  try {
    resolve({ body: JSON.parse(text) });
  } catch {
    resolve({ error: rpcError(400, -32700, 'Parse error: the body is not JSON') });
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
  // A GET stream may stay quiet for long: its headers go now, or the host waits for them until
  // its open timeout (node:http holds them until the first write).
  if (res.req.method === 'GET') res.flushHeaders();
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

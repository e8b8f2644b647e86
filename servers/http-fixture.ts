// A node:http MCP Streamable HTTP (2025-11-25) server for tests, with fault switches.
// Hand-written; does not use the SDK. Test fixture code only.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { endSse, isClosed, startSse, writeSseMessage, writeSsePriming } from './sse-writer.js';
import { listenOnLoopback, readBody } from './listen.js';

export interface FixtureOptions {
  sessionRequired?: boolean;
  responseMode?: 'json' | 'sse';
  protocolVersion?: string;
  getMode?: 'sse' | 405 | 404 | 406 | 400 | 409;
  path?: string;
}

export interface RecordedRequest {
  method: string;
  /** The request target (path and query). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  rpcMethod?: string;
  at: number;
}

export interface Faults {
  fail500Once?: boolean;
  garbleNextBody?: boolean;
  wrongContentTypeOnce?: boolean;
  hugeBodyBytes?: number;
  delayMs?: number;
  dropSocketOnce?: boolean;
  notFoundOnInitialize?: boolean;
  invalidSessionIdOnce?: boolean;
  sseEndWithoutResponse?: 'with-id' | 'without-id' | null;
  retryMs?: number;
  notifyBeforeResponse?: boolean;
  /** Answer `ping` with -32601 Method not found (servers without ping). */
  pingUnsupported?: boolean;
  /** Never answer `ping` (a server that silently stopped responding to probes). */
  silentPings?: boolean;
  /** The next 404 for an unknown session is sent this many ms late (a late 404 from an old session). */
  delayNextNotFoundMs?: number;
  getMode?: FixtureOptions['getMode'];
  /** Every request must carry `Authorization: Bearer <token>`; otherwise 401 with `challenge` as WWW-Authenticate. */
  bearer?: { token: string; challenge?: string } | undefined;
  /** Answer `tools/call` with 403 and this WWW-Authenticate (e.g. `Bearer error="insufficient_scope", scope="a b"`). */
  forbidToolsCall?: string | undefined;
  /** Answer with 500 and the request's Authorization header in the error body (a server that echoes secrets). */
  echoAuthorizationOnce?: boolean;
  /**
   * Answer the next POST (`true`) or the next POST of this method with 500 and a long error
   * message that repeats its URL and every header (session id included).
   */
  echoRequestOnce?: boolean | string;
}

export interface HttpFixture {
  url: string;
  /** Answers of the `trickle` tool still open (a slow server's abandoned exchanges). */
  trickling(): number;
  requests: RecordedRequest[];
  sessions: Set<string>;
  faults: Faults;
  expireAllSessions(): void;
  push(message: object): boolean;
  closeGetStreams(): void;
  getStreamCount(): number;
  close(): Promise<void>;
}

export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
/** Session id handed out when `faults.invalidSessionIdOnce` is set (space + non-ASCII byte 0xE9). */
export const INVALID_SESSION_ID = 'bad id\u00e9';

type JsonRpcMessage = Record<string, any>;
interface GetStream {
  res: ServerResponse;
  session: string | undefined;
}

const ECHO_TOOL = {
  name: 'echo',
  description: 'Echo the given text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict: Only one SSE stream is allowed per session',
};

function rpcError(id: unknown, code: number, message: string): JsonRpcMessage {
  return { jsonrpc: '2.0', error: { code, message }, id: id ?? null };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (isClosed(res)) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function computeResponse(msg: JsonRpcMessage): Promise<JsonRpcMessage> {
  const id = msg.id;
  const ok = (result: unknown): JsonRpcMessage => ({ jsonrpc: '2.0', id, result });
  const params = (msg.params ?? {}) as Record<string, any>;
  switch (msg.method) {
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({ tools: [ECHO_TOOL] });
    case 'tools/call': {
      const args = (params.arguments ?? {}) as Record<string, any>;
      if (params.name === 'echo') return ok({ content: [{ type: 'text', text: String(args.text ?? '') }] });
      if (params.name === 'slow') {
        const ms = Number(args.ms ?? 0);
        await sleep(ms);
        return ok({ content: [{ type: 'text', text: `slept ${ms}ms` }] });
      }
      return rpcError(id, -32602, `Unknown tool: ${String(params.name)}`);
    }
    default:
      return rpcError(id, -32601, `Method not found: ${String(msg.method)}`);
  }
}

export async function startHttpFixture(options: FixtureOptions = {}): Promise<HttpFixture> {
  const path = options.path ?? '/mcp';
  const sessionRequired = options.sessionRequired ?? true;
  const responseMode = options.responseMode ?? 'json';
  const requests: RecordedRequest[] = [];
  const sessions = new Set<string>();
  const faults: Faults = {};
  const getStreams = new Set<GetStream>();
  /** priming event id of a POST stream that ended early -> its eventual response */
  const pendingResumes = new Map<string, Promise<JsonRpcMessage>>();
  /** Open answers of the `trickle` tool. */
  const trickling = new Set<ServerResponse>();
  let eventCounter = 0;
  const nextEventId = (): string => String(++eventCounter);

  /** Validates the session header. Returns the id, undefined (sessions off), or false (already answered). */
  function checkSession(req: IncomingMessage, res: ServerResponse): string | undefined | false {
    if (!sessionRequired) return undefined;
    const sid = header(req, 'mcp-session-id');
    if (!sid) {
      sendJson(res, 400, rpcError(null, -32000, 'Bad Request: Missing session ID'));
      return false;
    }
    if (!sessions.has(sid)) {
      const delay = faults.delayNextNotFoundMs;
      faults.delayNextNotFoundMs = undefined;
      if (delay) setTimeout(() => sendJson(res, 404, rpcError(null, -32001, 'Session not found')), delay);
      else sendJson(res, 404, rpcError(null, -32001, 'Session not found'));
      return false;
    }
    return sid;
  }

  /** Answer a JSON-RPC request, applying the response faults. */
  async function answerRequest(
    res: ServerResponse,
    reqId: unknown,
    outcome: Promise<JsonRpcMessage>,
    extraHeaders: Record<string, string> = {},
  ): Promise<void> {
    if (faults.delayMs) await sleep(faults.delayMs);
    if (faults.wrongContentTypeOnce) {
      faults.wrongContentTypeOnce = false;
      if (isClosed(res)) return;
      res.writeHead(200, { 'content-type': 'text/html', ...extraHeaders }).end('<html>oops</html>');
      return;
    }
    if (faults.garbleNextBody) {
      faults.garbleNextBody = false;
      if (isClosed(res)) return;
      res.writeHead(200, { 'content-type': 'application/json', ...extraHeaders }).end('{"jsonrpc":"2.0", garbage');
      return;
    }
    if (faults.hugeBodyBytes) {
      const target = faults.hugeBodyBytes;
      faults.hugeBodyBytes = undefined;
      const base = JSON.stringify({ jsonrpc: '2.0', id: reqId, result: { content: [{ type: 'text', text: '' }] } });
      const text = 'x'.repeat(Math.max(0, target - Buffer.byteLength(base)));
      sendJson(res, 200, { jsonrpc: '2.0', id: reqId, result: { content: [{ type: 'text', text }] } }, extraHeaders);
      return;
    }
    const endMode = faults.sseEndWithoutResponse;
    if (endMode) {
      faults.sseEndWithoutResponse = null;
      startSse(res, extraHeaders);
      if (endMode === 'with-id') {
        const primingId = nextEventId();
        pendingResumes.set(primingId, outcome);
        writeSsePriming(res, primingId, faults.retryMs);
      }
      endSse(res);
      return;
    }
    if (responseMode === 'sse') {
      startSse(res, extraHeaders);
      if (faults.notifyBeforeResponse) {
        const note = {
          jsonrpc: '2.0',
          method: 'notifications/message',
          params: { level: 'info', logger: 'fixture', data: 'before response' },
        };
        writeSseMessage(res, note, nextEventId(), faults.retryMs);
        writeSseMessage(res, { jsonrpc: '2.0', id: 'srv-1', method: 'ping' }, nextEventId(), faults.retryMs);
      }
      const response = await outcome;
      writeSseMessage(res, response, nextEventId(), faults.retryMs);
      endSse(res);
      return;
    }
    sendJson(res, 200, await outcome, extraHeaders);
  }

  async function handleInitialize(res: ServerResponse, msg: JsonRpcMessage): Promise<void> {
    if (faults.notFoundOnInitialize) {
      sendJson(res, 404, rpcError(null, -32001, 'Not Found'));
      return;
    }
    const headers: Record<string, string> = {};
    if (sessionRequired) {
      let sid = `sess-${randomUUID()}`;
      if (faults.invalidSessionIdOnce) {
        faults.invalidSessionIdOnce = false;
        sid = INVALID_SESSION_ID;
      }
      sessions.add(sid);
      headers['mcp-session-id'] = sid;
    }
    const asked = (msg.params as Record<string, unknown> | undefined)?.protocolVersion;
    const protocolVersion =
      options.protocolVersion ??
      (typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : '2025-11-25');
    const result = { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fixture', version: '1.0.0' } };
    await answerRequest(res, msg.id, Promise.resolve({ jsonrpc: '2.0', id: msg.id, result }), headers);
  }

  async function handlePost(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const accept = header(req, 'accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      sendJson(
        res,
        406,
        rpcError(null, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream'),
      );
      return;
    }
    const ctype = (header(req, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (ctype !== 'application/json') {
      sendJson(res, 415, rpcError(null, -32000, 'Unsupported Media Type: Content-Type must be application/json'));
      return;
    }
    if (body === undefined) {
      sendJson(res, 400, rpcError(null, -32700, 'Parse error'));
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      sendJson(res, 400, rpcError(null, -32600, 'Invalid Request'));
      return;
    }
    if (faults.dropSocketOnce) {
      faults.dropSocketOnce = false;
      req.socket.destroy();
      return;
    }
    const msg = body as JsonRpcMessage;
    if (msg.method === 'initialize') return handleInitialize(res, msg);
    if (faults.fail500Once) {
      faults.fail500Once = false;
      sendJson(res, 500, rpcError(null, -32603, 'Internal Server Error'));
      return;
    }
    if (checkSession(req, res) === false) return;
    if (typeof msg.method !== 'string' || msg.id === undefined) {
      // notification or JSON-RPC response from the client
      if (!isClosed(res)) res.writeHead(202).end();
      return;
    }
    if (msg.method === 'ping' && faults.silentPings) return; // the client's timeout ends it
    if (msg.method === 'tools/call' && (msg.params as Record<string, unknown> | undefined)?.name === 'trickle') {
      trickle(res, Number((msg.params as { arguments?: { everyMs?: unknown } }).arguments?.everyMs ?? 50));
      return;
    }
    if (msg.method === 'ping' && faults.pingUnsupported) {
      return answerRequest(res, msg.id, Promise.resolve(rpcError(msg.id, -32601, 'Method not found: ping')));
    }
    return answerRequest(res, msg.id, computeResponse(msg));
  }

  /**
   * The `trickle` tool: a slow server. The headers at once, then one byte of the body every
   * `everyMs` (whitespace in JSON mode, an SSE comment line in SSE mode), never completing; stops
   * when the client lets the exchange go.
   */
  function trickle(res: ServerResponse, everyMs: number): void {
    if (responseMode === 'sse') startSse(res);
    else res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000000' }).flushHeaders();
    trickling.add(res);
    const timer = setInterval(() => {
      if (!isClosed(res)) res.write(responseMode === 'sse' ? ':\n' : ' ');
    }, everyMs);
    res.on('close', () => {
      clearInterval(timer);
      trickling.delete(res);
    });
  }

  function handleGet(req: IncomingMessage, res: ServerResponse): void {
    const mode = faults.getMode ?? options.getMode ?? 'sse';
    if (mode !== 'sse') {
      sendJson(
        res,
        mode,
        rpcError(null, -32000, STATUS_TEXT[mode] ?? 'Error'),
        mode === 405 ? { allow: 'POST, DELETE' } : {},
      );
      return;
    }
    if (!(header(req, 'accept') ?? '').includes('text/event-stream')) {
      sendJson(res, 406, rpcError(null, -32000, 'Not Acceptable: Client must accept text/event-stream'));
      return;
    }
    const sid = checkSession(req, res);
    if (sid === false) return;
    startSse(res);
    const stream: GetStream = { res, session: sid };
    getStreams.add(stream);
    res.on('close', () => getStreams.delete(stream));
    const lastEventId = header(req, 'last-event-id');
    const pending = lastEventId !== undefined ? pendingResumes.get(lastEventId) : undefined;
    if (lastEventId !== undefined && pending) {
      pendingResumes.delete(lastEventId);
      void pending.then((msg) => writeSseMessage(res, msg, nextEventId(), faults.retryMs));
    } else {
      writeSsePriming(res, nextEventId(), faults.retryMs);
    }
  }

  function handleDelete(req: IncomingMessage, res: ServerResponse): void {
    if (!sessionRequired) {
      sendJson(res, 405, rpcError(null, -32000, 'Method Not Allowed'), { allow: 'GET, POST' });
      return;
    }
    const sid = checkSession(req, res);
    if (sid === false || sid === undefined) return;
    sessions.delete(sid);
    for (const s of [...getStreams]) {
      if (s.session === sid) {
        getStreams.delete(s);
        endSse(s.res);
      }
    }
    if (!isClosed(res)) res.writeHead(200).end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: any;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
    }
    const rpcMethod =
      body && typeof body === 'object' && !Array.isArray(body) && typeof body.method === 'string'
        ? (body.method as string)
        : undefined;
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      headers: { ...req.headers },
      body,
      rpcMethod,
      at: Date.now(),
    });
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname !== path) return sendJson(res, 404, rpcError(null, -32000, 'Not Found'));
    if (faults.bearer && req.headers.authorization !== `Bearer ${faults.bearer.token}`) {
      return sendJson(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': faults.bearer.challenge ?? 'Bearer realm="mcp"' },
      );
    }
    if (faults.echoAuthorizationOnce && req.method === 'POST') {
      faults.echoAuthorizationOnce = false;
      return sendJson(
        res,
        500,
        rpcError(body?.id, -32603, `internal error for credentials ${String(req.headers.authorization)}`),
      );
    }
    if (
      req.method === 'POST' &&
      (faults.echoRequestOnce === true || (faults.echoRequestOnce && faults.echoRequestOnce === rpcMethod))
    ) {
      faults.echoRequestOnce = false;
      // Long enough that an error excerpt would cut through the echoed values.
      const echo = `${'internal error '.repeat(8)}at ${req.url ?? ''} with ${JSON.stringify(req.headers)}`;
      return sendJson(res, 500, rpcError(body?.id, -32603, echo));
    }
    if (faults.forbidToolsCall !== undefined && rpcMethod === 'tools/call') {
      return sendJson(res, 403, { error: 'insufficient_scope' }, { 'www-authenticate': faults.forbidToolsCall });
    }
    switch (req.method) {
      case 'POST':
        return handlePost(req, res, body);
      case 'GET':
        return handleGet(req, res);
      case 'DELETE':
        return handleDelete(req, res);
      default:
        sendJson(res, 405, rpcError(null, -32000, 'Method Not Allowed'), { allow: 'GET, POST, DELETE' });
    }
  }

  const server = createServer(
    { requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        if (!res.headersSent && !isClosed(res)) sendJson(res, 500, rpcError(null, -32603, String(err)));
        else res.destroy();
      });
    },
  );
  const listening = await listenOnLoopback(server);
  const { port } = listening;

  function closeGetStreams(): void {
    for (const s of getStreams) endSse(s.res);
    getStreams.clear();
  }

  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    sessions,
    faults,
    expireAllSessions: () => sessions.clear(),
    push(message: object): boolean {
      let sent = 0;
      for (const s of getStreams) if (writeSseMessage(s.res, message, nextEventId(), faults.retryMs)) sent++;
      return sent > 0;
    },
    closeGetStreams,
    getStreamCount: () => getStreams.size,
    trickling: () => trickling.size,
    async close(): Promise<void> {
      closeGetStreams();
      await listening.close();
    },
  };
}

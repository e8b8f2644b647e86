// A node:http MCP Streamable HTTP (2025-11-25) server for tests, with fault switches.
// Hand-written; does not use the SDK. Test fixture code only. Its parts live in http-fixture/:
// the wire (JSON-RPC answers), the tools, the fault switches, the session table, the GET streams.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isClosed } from './sse-writer.js';
import { listenOnLoopback, readBody } from './listen.js';
import { answerRequest, type Faults, type FixtureContext, type GetMode } from './http-fixture/faults.js';
import { createGetStreams } from './http-fixture/streams.js';
import { createSessionTable } from './http-fixture/sessions.js';
import { computeResponse, createTrickle } from './http-fixture/tools.js';
import { header, rpcError, sendJson, type JsonRpcMessage } from './http-fixture/wire.js';

export type { Faults } from './http-fixture/faults.js';
export { INVALID_SESSION_ID } from './http-fixture/sessions.js';

export interface FixtureOptions {
  sessionRequired?: boolean;
  responseMode?: 'json' | 'sse';
  protocolVersion?: string;
  getMode?: GetMode;
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

export interface HttpFixture {
  url: string;
  /** Answers of the `trickle` tool still open (a slow server's abandoned exchanges). */
  trickling(): number;
  requests: RecordedRequest[];
  /** Requests (POSTs with an id) being answered now, and the most at once so far. */
  concurrency: { now: number; peak: number };
  sessions: Set<string>;
  faults: Faults;
  expireAllSessions(): void;
  push(message: object): boolean;
  closeGetStreams(): void;
  getStreamCount(): number;
  close(): Promise<void>;
}

export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

export async function startHttpFixture(options: FixtureOptions = {}): Promise<HttpFixture> {
  const path = options.path ?? '/mcp';
  const sessionRequired = options.sessionRequired ?? true;
  const requests: RecordedRequest[] = [];
  const concurrency = { now: 0, peak: 0 };
  const faults: Faults = {};
  let eventCounter = 0;
  const ctx: FixtureContext = {
    responseMode: options.responseMode ?? 'json',
    faults,
    nextEventId: () => String(++eventCounter),
    pendingResumes: new Map(),
  };
  const sessions = createSessionTable(sessionRequired, faults);
  const streams = createGetStreams(ctx, sessions, options.getMode);
  const trickle = createTrickle(ctx.responseMode);

  async function handleInitialize(res: ServerResponse, msg: JsonRpcMessage): Promise<void> {
    if (faults.notFoundOnInitialize) {
      sendJson(res, 404, rpcError(null, -32001, 'Not Found'));
      return;
    }
    const headers: Record<string, string> = {};
    if (sessionRequired) headers['mcp-session-id'] = sessions.open();
    const asked = (msg.params as Record<string, unknown> | undefined)?.protocolVersion;
    const protocolVersion =
      options.protocolVersion ??
      (typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : '2025-11-25');
    const result = { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fixture', version: '1.0.0' } };
    await answerRequest(ctx, res, msg.id, Promise.resolve({ jsonrpc: '2.0', id: msg.id, result }), headers);
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
    if (sessions.check(req, res) === false) return;
    if (typeof msg.method !== 'string' || msg.id === undefined) {
      // notification or JSON-RPC response from the client
      if (!isClosed(res)) res.writeHead(202).end();
      return;
    }
    if (faults.busy) {
      const { status, retryAfter } = faults.busy;
      const text = status === 429 ? 'Too Many Requests' : 'Service Unavailable';
      sendJson(
        res,
        status,
        rpcError(msg.id, -32000, text),
        retryAfter === undefined ? {} : { 'retry-after': retryAfter },
      );
      return;
    }
    if (msg.method === 'ping' && faults.silentPings) return; // the client's timeout ends it
    if (msg.method === 'tools/call' && (msg.params as Record<string, unknown> | undefined)?.name === 'trickle') {
      trickle.start(res, Number((msg.params as { arguments?: { everyMs?: unknown } }).arguments?.everyMs ?? 50));
      return;
    }
    if (msg.method === 'ping' && faults.pingUnsupported) {
      return answerRequest(ctx, res, msg.id, Promise.resolve(rpcError(msg.id, -32601, 'Method not found: ping')));
    }
    return answerRequest(ctx, res, msg.id, computeResponse(msg));
  }

  function handleDelete(req: IncomingMessage, res: ServerResponse): void {
    if (!sessionRequired) {
      sendJson(res, 405, rpcError(null, -32000, 'Method Not Allowed'), { allow: 'GET, POST' });
      return;
    }
    const sid = sessions.check(req, res);
    if (sid === false || sid === undefined) return;
    sessions.ids.delete(sid);
    streams.endSession(sid);
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
    if (req.method === 'POST' && body?.id !== undefined) {
      concurrency.peak = Math.max(concurrency.peak, ++concurrency.now);
      res.once('close', () => concurrency.now--);
    }
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (pathname !== path) return sendJson(res, 404, rpcError(null, -32000, 'Not Found'));
    const busyFor = faults.busyFor;
    if (
      busyFor &&
      (busyFor.what === 'GET' || busyFor.what === 'POST' ? req.method === busyFor.what : rpcMethod === busyFor.what)
    ) {
      if (--busyFor.times <= 0) faults.busyFor = undefined;
      const text = busyFor.status === 429 ? 'Too Many Requests' : 'Service Unavailable';
      const headers: Record<string, string> =
        busyFor.retryAfter === undefined ? {} : { 'retry-after': busyFor.retryAfter };
      return sendJson(res, busyFor.status, rpcError(body?.id ?? null, -32000, text), headers);
    }
    const limited = faults.rateLimitedFor;
    if (limited && rpcMethod === limited.what && body?.id !== undefined) {
      if (--limited.times <= 0) faults.rateLimitedFor = undefined;
      const error = { code: -32023, message: 'Rate limited', data: { retryAfterMs: limited.retryAfterMs } };
      return sendJson(res, 200, { jsonrpc: '2.0', id: body.id, error });
    }
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
        return streams.handleGet(req, res);
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

  return {
    url: `http://127.0.0.1:${listening.port}${path}`,
    requests,
    concurrency,
    sessions: sessions.ids,
    faults,
    expireAllSessions: () => sessions.ids.clear(),
    push: (message: object) => streams.push(message),
    closeGetStreams: () => streams.closeAll(),
    getStreamCount: () => streams.count(),
    trickling: () => trickle.open(),
    async close(): Promise<void> {
      streams.closeAll();
      await listening.close();
    },
  };
}

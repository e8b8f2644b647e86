// The HTTP fixture's fault switches, and answering a request with the response faults applied.
import type { ServerResponse } from 'node:http';
import { endSse, isClosed, startSse, writeSseMessage, writeSsePriming } from '../sse-writer.js';
import { sleep } from './tools.js';
import { sendJson, type JsonRpcMessage } from './wire.js';

export type GetMode = 'sse' | 405 | 404 | 406 | 400 | 409;

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
  getMode?: GetMode;
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
  /**
   * Answer every request but `initialize` (and notifications) with this status, and `retryAfter`
   * as its Retry-After header when given (seconds or an HTTP date), until the switch is cleared.
   */
  busy?: { status: 429 | 503; retryAfter?: string | undefined } | undefined;
  /**
   * Answer the next `times` requests of one kind (a JSON-RPC method such as `initialize` or
   * `server/discover`, `GET` for the listening stream, `POST` for every POST) with this status
   * and Retry-After (`times: Infinity`: until the switch is cleared).
   */
  busyFor?: { what: string; times: number; status: 429 | 503; retryAfter?: string | undefined } | undefined;
  /** Answer the next `times` requests of a JSON-RPC method with the draft rate-limit error -32023 and `data.retryAfterMs`. */
  rateLimitedFor?: { what: string; times: number; retryAfterMs: number } | undefined;
}

/** What the fixture's parts share. */
export interface FixtureContext {
  readonly responseMode: 'json' | 'sse';
  readonly faults: Faults;
  /** SSE event ids, one sequence for POST answers and GET streams. */
  nextEventId(): string;
  /** Priming event id of a POST stream that ended early → its eventual response (a GET resumes it). */
  readonly pendingResumes: Map<string, Promise<JsonRpcMessage>>;
}

/** Answer a JSON-RPC request, applying the response faults. */
export async function answerRequest(
  ctx: FixtureContext,
  res: ServerResponse,
  reqId: unknown,
  outcome: Promise<JsonRpcMessage>,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  const { faults } = ctx;
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
      const primingId = ctx.nextEventId();
      ctx.pendingResumes.set(primingId, outcome);
      writeSsePriming(res, primingId, faults.retryMs);
    }
    endSse(res);
    return;
  }
  if (ctx.responseMode === 'sse') {
    startSse(res, extraHeaders);
    if (faults.notifyBeforeResponse) {
      const note = {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', logger: 'fixture', data: 'before response' },
      };
      writeSseMessage(res, note, ctx.nextEventId(), faults.retryMs);
      writeSseMessage(res, { jsonrpc: '2.0', id: 'srv-1', method: 'ping' }, ctx.nextEventId(), faults.retryMs);
    }
    const response = await outcome;
    writeSseMessage(res, response, ctx.nextEventId(), faults.retryMs);
    endSse(res);
    return;
  }
  sendJson(res, 200, await outcome, extraHeaders);
}

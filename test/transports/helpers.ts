/**
 * Shared helpers for the transport tests: cleanup of servers and handles, a scripted node:http
 * server for behaviours the fixture has no switch for, timers the test fires by hand, and a
 * recording sink for driving StreamableHttpTransport directly.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { vi } from 'vitest';
import { connect, type ServerHandle, type TransitionEvent } from '../../src/index.js';
import type { JsonRpcMessage, RequestId } from '../../src/protocol/jsonrpc.js';
import { StreamableHttpTransport, type HttpTransportOptions } from '../../src/transports/http/streamable-http.js';
import type { Timers, TransportSink } from '../../src/transports/transport.js';
import type { HttpOptions } from '../../src/transports/http-credentials.js';
import {
  startHttpFixture,
  type FixtureOptions,
  type HttpFixture,
  type RecordedRequest,
} from '../../servers/http-fixture.js';
import { formatSseEvent, type SseEvent } from '../../servers/sse-writer.js';

// ---------------------------------------------------------------- cleanup

/** Things to close after each test, closed in reverse order; failures are ignored. */
export class Cleanup {
  private readonly tasks: Array<() => unknown> = [];

  add<T>(value: T, close: (value: T) => unknown): T {
    this.tasks.push(() => close(value));
    return value;
  }

  async run(): Promise<void> {
    while (this.tasks.length > 0) {
      const task = this.tasks.pop()!;
      try {
        await task();
      } catch {
        // a test that already closed it
      }
    }
  }
}

export async function fixture(cleanup: Cleanup, options?: FixtureOptions): Promise<HttpFixture> {
  return cleanup.add(await startHttpFixture(options), (f) => f.close());
}

type ConnectConfig = Parameters<typeof connect>[0];

/** connect() to a URL; the handle is closed after the test. Transitions are recorded. */
export async function open(
  cleanup: Cleanup,
  url: string,
  config: Partial<Exclude<ConnectConfig, { command: string }>> = {},
  options: Parameters<typeof connect>[1] = {},
): Promise<{ handle: ServerHandle; transitions: TransitionEvent[] }> {
  const transitions: TransitionEvent[] = [];
  // These tests speak the 2025 wire to legacy fixtures: no server/discover probe first.
  const handle = await connect({ url, protocolVersion: 'legacy', ...config }, { name: 'fx', ...options });
  cleanup.add(handle, (h) => h.close());
  handle.on('transition', (event) => transitions.push(event));
  return { handle, transitions };
}

// ---------------------------------------------------------------- reading what the fixture saw

export function posts(
  requests: readonly RecordedRequest[] | readonly ScriptedRequest[],
  rpcMethod?: string,
): Array<RecordedRequest | ScriptedRequest> {
  return requests.filter((r) => r.method === 'POST' && (rpcMethod === undefined || r.rpcMethod === rpcMethod));
}

export function gets(
  requests: readonly RecordedRequest[] | readonly ScriptedRequest[],
): Array<RecordedRequest | ScriptedRequest> {
  return requests.filter((r) => r.method === 'GET');
}

export function deletes(
  requests: readonly RecordedRequest[] | readonly ScriptedRequest[],
): Array<RecordedRequest | ScriptedRequest> {
  return requests.filter((r) => r.method === 'DELETE');
}

/** POSTs that carried a JSON-RPC request (they have an id and a method). */
export function requestPosts(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.method === 'POST' && r.body && typeof r.body.method === 'string' && 'id' in r.body);
}

export function header(
  request: { headers: Record<string, string | string[] | undefined> },
  name: string,
): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

export function cancellations<R extends RecordedRequest | ScriptedRequest>(requests: readonly R[]): R[] {
  return requests.filter((r) => r.rpcMethod === 'notifications/cancelled');
}

/** Waits until `predicate` holds (polling), failing after `timeout` ms. */
export function until(predicate: () => boolean, timeout = 5_000): Promise<void> {
  return vi.waitFor(
    () => {
      if (!predicate()) throw new Error('condition not met yet');
    },
    { timeout, interval: 5 },
  );
}

/** Lets in-flight I/O settle for a moment (used only to prove something did NOT happen). */
export function settle(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

// ---------------------------------------------------------------- a scripted server

export interface ScriptedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: any;
  rpcMethod?: string | undefined;
  at: number;
}

export interface ScriptedServer {
  url: string;
  origin: string;
  requests: ScriptedRequest[];
  /** Connections the server accepted so far. */
  readonly connections: number;
  close(): Promise<void>;
}

export type ScriptedHandler = (
  request: ScriptedRequest,
  res: ServerResponse,
  req: IncomingMessage,
) => void | Promise<void>;

/** A node:http server on 127.0.0.1 whose answers the test scripts, request by request. */
export async function scriptedServer(cleanup: Cleanup, handler: ScriptedHandler): Promise<ScriptedServer> {
  const requests: ScriptedRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const recorded: ScriptedRequest = {
        method: req.method ?? '',
        headers: { ...req.headers },
        body,
        rpcMethod: body && typeof body === 'object' && typeof body.method === 'string' ? body.method : undefined,
        at: Date.now(),
      };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res, req)).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const scripted: ScriptedServer = {
    url: `http://127.0.0.1:${port}/mcp`,
    origin: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  return cleanup.add(scripted, (s) => s.close());
}

export function initializeResult(id: unknown, protocolVersion = '2025-11-25'): object {
  return {
    jsonrpc: '2.0',
    id,
    result: { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'scripted', version: '1.0.0' } },
  };
}

export function replyJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
}

export function sse(event: SseEvent | object): string {
  return 'data' in event && typeof event.data === 'string'
    ? formatSseEvent(event)
    : formatSseEvent({ event: 'message', data: JSON.stringify(event) });
}

/**
 * The ordinary parts of an MCP server: initialize (with a session id), 202 for notifications and
 * responses, 405 for GET, 200 for DELETE. Returns false when the request is something else.
 */
export function answerBasics(
  request: ScriptedRequest,
  res: ServerResponse,
  options: { sessionId?: string; protocolVersion?: string; get?: number } = {},
): boolean {
  const body = request.body;
  if (request.method === 'POST' && body?.method === 'initialize') {
    replyJson(
      res,
      200,
      initializeResult(body.id, options.protocolVersion),
      options.sessionId ? { 'mcp-session-id': options.sessionId } : {},
    );
    return true;
  }
  if (request.method === 'POST' && body && (body.id === undefined || body.method === undefined)) {
    res.writeHead(202).end();
    return true;
  }
  // A 2025-era server does not know 2026-07-28's `server/discover` (a discover that times out is
  // no evidence of an era: the connection would fail at its request timeout).
  if (request.method === 'POST' && body?.method === 'server/discover') {
    replyJson(res, 200, { jsonrpc: '2.0', id: body.id, error: { code: -32601, message: 'Method not found' } });
    return true;
  }
  if (request.method === 'GET') {
    replyJson(res, options.get ?? 405, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Method Not Allowed' },
    });
    return true;
  }
  if (request.method === 'DELETE') {
    res.writeHead(200).end();
    return true;
  }
  return false;
}

export function toolResult(id: unknown, text: string): object {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } };
}

// ---------------------------------------------------------------- driving the transport directly

/** Timers the test fires by hand: each requested delay is recorded, nothing runs on its own. */
export class ManualTimers implements Timers {
  readonly scheduled: Array<{ ms: number; fn: () => void; cleared: boolean; fired: boolean }> = [];

  setTimeout(fn: () => void, ms: number): unknown {
    const entry = { ms, fn, cleared: false, fired: false };
    this.scheduled.push(entry);
    return entry;
  }

  clearTimeout(handle: unknown): void {
    if (handle) (handle as { cleared: boolean }).cleared = true;
  }

  /** Waits for the n-th (0-based) delay to be requested. */
  async nth(n: number): Promise<{ ms: number; fire(): void }> {
    await until(() => this.scheduled.length > n);
    const entry = this.scheduled[n]!;
    return {
      ms: entry.ms,
      fire: () => {
        if (entry.cleared || entry.fired) return;
        entry.fired = true;
        entry.fn();
      },
    };
  }
}

export interface RecordingSink extends TransportSink {
  messages: JsonRpcMessage[];
  streamErrors: Error[];
  closedWith: Error[];
  /** Ids the test is waiting on; a response removes its id. */
  awaiting: Set<RequestId>;
}

export function recordingSink(): RecordingSink {
  const sink: RecordingSink = {
    messages: [],
    streamErrors: [],
    closedWith: [],
    awaiting: new Set(),
    onMessage(message) {
      sink.messages.push(message);
      if (!('method' in message) && message.id !== null) sink.awaiting.delete(message.id);
    },
    isAwaiting: (id) => sink.awaiting.has(id),
    onStreamError: (error) => sink.streamErrors.push(error),
    onClosed: (error) => sink.closedWith.push(error),
  };
  return sink;
}

/** Options for either HTTP transport in these tests: small limits and a recording sink, overridable. */
export function testHttpOptions<T extends Partial<HttpOptions>>(
  url: string,
  server: string,
  options: T,
): HttpOptions & T & { sink: RecordingSink } {
  const sink = (options.sink as RecordingSink | undefined) ?? recordingSink();
  return {
    url: new URL(url),
    server,
    headers: {},
    requestTimeoutMs: 5_000,
    maxMessageBytes: 1024 * 1024,
    ...options,
    sink,
  };
}

export function transportTo(
  cleanup: Cleanup,
  url: string,
  options: Partial<HttpTransportOptions> = {},
): { transport: StreamableHttpTransport; sink: RecordingSink } {
  const built = testHttpOptions(url, 'direct', options);
  const transport = new StreamableHttpTransport(built);
  cleanup.add(transport, (t) => t.close());
  return { transport, sink: built.sink };
}

let directId = 1_000;

/** Sends a request through the transport and resolves with the response the sink received. */
export async function call(
  transport: StreamableHttpTransport,
  sink: RecordingSink,
  method: string,
  params?: Record<string, unknown>,
  handshake = false,
): Promise<JsonRpcMessage> {
  const id = ++directId;
  sink.awaiting.add(id);
  await transport.send({ jsonrpc: '2.0', id, method, params }, { handshake });
  const response = sink.messages.find((m) => !('method' in m) && m.id === id);
  if (!response) throw new Error(`no response for ${method} (${id})`);
  return response;
}

/** initialize + initialized, as the runtime does it. */
export async function handshake(transport: StreamableHttpTransport, sink: RecordingSink): Promise<string> {
  transport.beginSession();
  const response = (await call(
    transport,
    sink,
    'initialize',
    { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'direct', version: '0' } },
    true,
  )) as {
    result: { protocolVersion: string };
  };
  transport.completeSession(response.result.protocolVersion);
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return response.result.protocolVersion;
}

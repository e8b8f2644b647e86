// A node:http legacy HTTP+SSE (MCP 2024-11-05) server for tests, with fault switches.
// Hand-written; does not use the SDK. Test fixture code only.
//
//   GET  /sse (any path)           -> text/event-stream; first event `endpoint` = /messages?sessionId=<id>
//   POST <any path>?sessionId=<id> -> 202; the response is pushed as `event: message` on that session's stream
//   POST without a session (/sse, /mcp, …) -> 405, so a Streamable-HTTP-first client falls back
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { endSse, startSse, writeSseEvent, writeSseMessage } from './sse-writer.js';
import { computeResponse as answerRequest } from './http-fixture/tools.js';
import { sendJson } from './http-fixture/wire.js';
import { listenOnLoopback, readBody } from './listen.js';

/** Every switch may be changed while the fixture runs (through `fixture.settings`). */
export interface LegacyFixtureSettings {
  /** End a stream after this many ms without writing to it (a proxy closing idle connections). */
  idleCloseMs?: number | undefined;
  /** Send an absolute endpoint on this origin (e.g. another host) instead of a relative one. */
  endpointOrigin?: string | undefined;
  /** The endpoint event's data for a session; overrides the default `/messages?sessionId=<id>`. */
  endpointFor?: ((sessionId: string) => string) | undefined;
  /** Never send the endpoint event. */
  noEndpoint?: boolean | undefined;
  /** Answer every POST with this status (e.g. 401) and do nothing else. */
  postStatus?: number | undefined;
  /** Answer the GET with this status instead of a stream. */
  getStatus?: number | undefined;
  /** Answer the GET with 200 and this content type instead of text/event-stream. */
  getContentType?: string | undefined;
  /** Every request must carry `Authorization: Bearer <token>`; otherwise 401 with a Bearer challenge. */
  bearerToken?: string | undefined;
  /** The protocol version the initialize result names. Default 2024-11-05. */
  protocolVersion?: string | undefined;
}

export interface LegacyRecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  rpcMethod?: string | undefined;
  at: number;
}

export interface LegacySseFixture {
  /** The SSE URL: http://127.0.0.1:<port>/sse */
  url: string;
  origin: string;
  settings: LegacyFixtureSettings;
  requests: LegacyRecordedRequest[];
  /** Session ids of the open streams. */
  sessions(): string[];
  streamCount(): number;
  /** Streams ended because they were idle for `idleCloseMs`. */
  idleCloses: number;
  /** Writes a message to every open stream; returns how many received it. */
  push(message: object): number;
  closeStreams(): void;
  close(): Promise<void>;
}

interface Stream {
  id: string;
  res: ServerResponse;
  idleTimer: NodeJS.Timeout | undefined;
}

const TOOLS = [
  {
    name: 'echo',
    description: 'Echo the given text',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'slow',
    description: 'Answer after ms milliseconds',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
  },
];

async function computeResponse(msg: Record<string, any>, protocolVersion: string): Promise<object> {
  const id = msg.id;
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
  switch (msg.method) {
    case 'initialize':
      return ok({
        protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'legacy-fixture', version: '1.0.0' },
      });
    case 'tools/list':
      return ok({ tools: TOOLS });
    default:
      // ping, tools/call and unknown methods: answered as the Streamable HTTP fixture answers them.
      return answerRequest(msg);
  }
}

export async function startLegacySseFixture(initial: LegacyFixtureSettings = {}): Promise<LegacySseFixture> {
  const settings: LegacyFixtureSettings = { ...initial };
  const requests: LegacyRecordedRequest[] = [];
  const streams = new Map<string, Stream>();
  let idleCloses = 0;

  /** (Re)arms a stream's idle timer; called after every write. */
  function touch(stream: Stream): void {
    clearTimeout(stream.idleTimer);
    stream.idleTimer = undefined;
    const ms = settings.idleCloseMs;
    if (ms === undefined) return;
    stream.idleTimer = setTimeout(() => {
      if (settings.idleCloseMs === undefined || !streams.has(stream.id)) return;
      idleCloses++;
      drop(stream);
    }, ms);
  }

  function drop(stream: Stream): void {
    clearTimeout(stream.idleTimer);
    streams.delete(stream.id);
    endSse(stream.res);
  }

  function write(stream: Stream, message: object): boolean {
    const written = writeSseMessage(stream.res, message);
    if (written) touch(stream);
    return written;
  }

  function handleGet(req: IncomingMessage, res: ServerResponse): void {
    if (settings.getStatus !== undefined)
      return sendJson(res, settings.getStatus, { error: `status ${settings.getStatus}` });
    if (settings.getContentType !== undefined) {
      res.writeHead(200, { 'content-type': settings.getContentType }).end('<html>not a stream</html>');
      return;
    }
    const accept = req.headers.accept ?? '';
    if (!accept.includes('text/event-stream'))
      return sendJson(res, 406, { error: 'Not Acceptable: text/event-stream required' });
    const stream: Stream = { id: randomUUID(), res, idleTimer: undefined };
    streams.set(stream.id, stream);
    res.on('close', () => {
      clearTimeout(stream.idleTimer);
      if (streams.get(stream.id) === stream) streams.delete(stream.id);
    });
    startSse(res);
    if (!settings.noEndpoint) {
      const data =
        settings.endpointFor?.(stream.id) ?? `${settings.endpointOrigin ?? ''}/messages?sessionId=${stream.id}`;
      writeSseEvent(res, { event: 'endpoint', data });
    }
    touch(stream);
  }

  async function handlePost(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
    body: unknown,
  ): Promise<void> {
    if (settings.postStatus !== undefined) {
      return sendJson(
        res,
        settings.postStatus,
        { error: `status ${settings.postStatus}` },
        settings.postStatus === 401 ? { 'www-authenticate': 'Bearer' } : {},
      );
    }
    const sessionId = url.searchParams.get('sessionId');
    if (sessionId === null) return sendJson(res, 405, { error: 'Method Not Allowed' }, { allow: 'GET' });
    const stream = streams.get(sessionId);
    if (!stream) return sendJson(res, 404, { error: 'Could not find session' });
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') return sendJson(res, 415, { error: `Unsupported content-type: ${type}` });
    if (body === undefined || typeof body !== 'object' || body === null)
      return sendJson(res, 400, { error: `Invalid message: ${raw}` });
    res.writeHead(202).end('Accepted');
    const msg = body as Record<string, any>;
    if (typeof msg.method !== 'string' || msg.id === undefined) return; // a notification or a response
    write(stream, await computeResponse(msg, settings.protocolVersion ?? '2024-11-05'));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const rpcMethod =
      body && typeof body === 'object' && typeof body.method === 'string' ? (body.method as string) : undefined;
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: { ...req.headers },
      body,
      rpcMethod,
      at: Date.now(),
    });
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (settings.bearerToken !== undefined && req.headers.authorization !== `Bearer ${settings.bearerToken}`) {
      return sendJson(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer realm="mcp"' });
    }
    if (req.method === 'GET') return handleGet(req, res);
    if (req.method === 'POST') return handlePost(req, res, url, raw, body);
    sendJson(res, 405, { error: 'Method Not Allowed' }, { allow: 'GET, POST' });
  }

  const server = createServer({ requestTimeout: 0, headersTimeout: 5_000, keepAliveTimeout: 5_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server);
  const { port } = listening;
  const origin = `http://127.0.0.1:${port}`;

  function closeStreams(): void {
    for (const stream of [...streams.values()]) drop(stream);
  }

  return {
    url: `${origin}/sse`,
    origin,
    settings,
    requests,
    sessions: () => [...streams.keys()],
    streamCount: () => streams.size,
    get idleCloses() {
      return idleCloses;
    },
    push(message: object): number {
      let sent = 0;
      for (const stream of streams.values()) if (write(stream, message)) sent++;
      return sent;
    },
    closeStreams,
    async close(): Promise<void> {
      closeStreams();
      await listening.close();
    },
  };
}

/**
 * A 2025 host session's transport over HTTP. The SDK's web-standard transport serves the session
 * (initialize, the GET stream and its resumption, DELETE, batches); the common POST — one
 * request, its progress included — is answered straight onto Node's response instead, with the
 * same SSE framing the SDK writes (a priming event with an id and `retry`, then each message with
 * an id kept in the session's event store, so a host can resume with `Last-Event-ID`). This skips
 * a web `Request`, `Response` and `ReadableStream` per call: most of the gateway's cost per call.
 */
import type { ServerResponse } from 'node:http';
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
  type WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { CallSignal } from './call-signal.js';
import type { BoundedEventStore } from './event-store.js';
import type { KeptSession } from './kept-sessions.js';
import type { RequestId } from '../protocol/jsonrpc.js';

interface DirectStream {
  /** undefined once the host went away: the answer is only kept for a resumption. */
  res: ServerResponse | undefined;
  stream: string;
  /** A request answered by the direct path: the host's `notifications/cancelled` aborts it. */
  abort?: CallSignal;
  /** Answered as one JSON body: nothing else is written on it. */
  json?: boolean;
}

const SSE_HEADERS = (sessionId: string | undefined) => ({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'mcp-session-id': sessionId ?? '',
});

/** One JSON-RPC message as the whole answer to a POST, in one write (a session's id with it, if any). */
export function writeJson(res: ServerResponse, message: object, sessionId?: string): void {
  if (res.destroyed) return;
  // A string body: node:http joins it to the head and writes both in one plain write (a Buffer body is a
  // second chunk of a writev); measuring it (byteLength) costs less than that (~1.5 µs per answer).
  const body = JSON.stringify(message);
  const length = String(Buffer.byteLength(body));
  // A flat list: node:http writes it as it is (an object is walked key by key).
  const headers =
    sessionId === undefined
      ? ['content-type', 'application/json', 'content-length', length]
      : ['content-type', 'application/json', 'content-length', length, 'mcp-session-id', sessionId];
  res.writeHead(200, headers).end(body);
}

/**
 * The direct path's answer to a request (direct-path.ts), or undefined: the SDK's server serves it.
 * `notify` (only for a request with a progress token) sends a notification on the request's stream.
 */
export type ServeDirect = (
  message: JSONRPCRequest,
  signal: AbortSignal,
  notify: ((notification: JSONRPCNotification) => void) | undefined,
) => Promise<JSONRPCMessage | undefined> | undefined;

/** As the SDK's transport: a host may reconnect a broken stream after this many ms. */
export const RETRY_MS = 1_000;
const NO_EXTRA: MessageExtraInfo = {};

export class SessionTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** When the host last sent anything on this session (idle expiry). */
  lastSeen = Date.now();
  /** The host's requests open on this session now (a GET stream counts): a busy session never expires. */
  open = 0;
  private readonly direct = new Map<RequestId, DirectStream>();
  private supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  private streams = 0;
  /** Set by the HTTP service: the calls it answers without the SDK's server. */
  serveDirect: ServeDirect | undefined;
  /** Set by the HTTP service: true when no server request can be pushed to this session's host (it declared none). */
  quiet: (() => boolean) | undefined;
  /** What the store keeps of this session (http-sessions.ts), once its handshake is done. */
  record: KeptSession | undefined;
  /** Set by the HTTP service: the host used the session at `now` (its record's lifetime restarts). */
  onUsed: ((now: number) => void) | undefined;
  /** Why the session closed: the host's DELETE, idle expiry; none: this process let it go (the record stays). */
  ending: 'ended' | 'expired' | undefined;

  constructor(
    readonly web: WebStandardStreamableHTTPServerTransport,
    private readonly events: BoundedEventStore,
  ) {
    web.onmessage = (message, extra) => {
      if ('method' in message && message.method === 'notifications/cancelled') this.cancelDirect(message.params);
      this.onmessage?.(message, extra);
    };
    web.onclose = () => {
      this.endDirect();
      this.onclose?.();
    };
    web.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.web.sessionId;
  }

  start(): Promise<void> {
    return this.web.start();
  }

  close(): Promise<void> {
    this.endDirect();
    return this.web.close();
  }

  /** The session is over (closed here, or by the host's DELETE): no answer will come on these. */
  private endDirect(): void {
    for (const direct of this.direct.values()) {
      direct.abort?.abort(new Error('the session closed'));
      direct.res?.end();
    }
    this.direct.clear();
  }

  /** A cancelled request gets no answer (as the SDK's server does): its stream ends empty. */
  private cancelled(id: RequestId, direct: DirectStream): void {
    if (this.direct.get(id) === direct) this.direct.delete(id);
    if (direct.res && !direct.res.headersSent) direct.res.writeHead(200, SSE_HEADERS(this.web.sessionId));
    direct.res?.end();
  }

  /** The host cancelled a request the direct path serves: the upstream call is cancelled. */
  private cancelDirect(params: unknown): void {
    const id = (params as { requestId?: RequestId } | undefined)?.requestId;
    const direct = id === undefined ? undefined : this.direct.get(id);
    direct?.abort?.abort(new Error('the host cancelled the request'));
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.supported = versions;
    this.web.setSupportedProtocolVersions(versions);
  }

  /** Whether a POST's `MCP-Protocol-Version` header is one the web transport would accept. */
  acceptsVersion(header: string | undefined): boolean {
    return header === undefined || this.supported.includes(header);
  }

  /**
   * Serves one request of this session on `res`: answered by the direct path (as JSON when
   * nothing can be pushed on the request's stream, else as SSE) or by the SDK's server (SSE).
   */
  post(message: JSONRPCRequest, res: ServerResponse, version: string | undefined): void {
    const abort = this.serveDirect && new CallSignal();
    const id = message.id;
    // Progress goes on the request's SSE stream, as the SDK's server sends it (send() below).
    const notify = hasProgressToken(message)
      ? (notification: JSONRPCNotification) => void this.send(notification, { relatedRequestId: id })
      : undefined;
    const answer = abort && this.serveDirect!(message, abort.signal, notify);
    if (!abort || !answer) return void this.stream(message, res, version, this.onmessage);
    // Nothing can come on this stream before the answer (no progress, and the host takes no server requests): plain JSON.
    const json = notify === undefined && this.quiet?.() === true;
    const direct: DirectStream = json
      ? { res, stream: '', json, abort }
      : this.stream(message, res, version, undefined);
    direct.abort = abort;
    if (json) this.direct.set(id, direct);
    answer.then(
      (response) => {
        if (abort.aborted) return this.cancelled(id, direct);
        if (!response) {
          this.direct.delete(id);
          return void (json ? this.stream(message, res, version, this.onmessage) : this.onmessage?.(message, NO_EXTRA));
        }
        if (!json) return void this.send(response);
        this.direct.delete(id);
        writeJson(res, response, this.web.sessionId ?? '');
      },
      (error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** An SSE stream for the request, primed for resumption; `dispatch` (the SDK's server) then serves it. */
  private stream(
    message: JSONRPCRequest,
    res: ServerResponse,
    version: string | undefined,
    dispatch: SessionTransport['onmessage'],
  ): DirectStream {
    const direct: DirectStream = { res, stream: `p${++this.streams}` };
    this.direct.set(message.id, direct);
    res.writeHead(200, SSE_HEADERS(this.web.sessionId));
    // Empty data (a priming event) is understood from 2025-11-25 on, as the SDK's transport decides.
    if (version !== undefined && version >= '2025-11-25')
      res.write(`id: ${this.events.store(direct.stream, {} as JSONRPCMessage)}\nretry: ${RETRY_MS}\ndata: \n\n`);
    res.once('close', () => {
      direct.res = undefined;
    });
    dispatch?.(message, NO_EXTRA);
    return direct;
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answered = 'result' in message || 'error' in message;
    const id = answered ? (message as { id: RequestId }).id : options?.relatedRequestId;
    const direct = id === undefined ? undefined : this.direct.get(id);
    if (!direct || direct.json) return this.web.send(message, options);
    const event = `event: message\nid: ${this.events.store(direct.stream, message)}\ndata: ${JSON.stringify(message)}\n\n`;
    if (answered) {
      this.direct.delete(id!);
      direct.res?.end(event);
    } else direct.res?.write(event);
    return Promise.resolve();
  }
}

function hasProgressToken(message: JSONRPCRequest): boolean {
  const meta = message.params?._meta;
  return typeof meta === 'object' && meta !== null && 'progressToken' in meta;
}

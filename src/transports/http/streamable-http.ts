/**
 * Streamable HTTP transport (MCP 2025-03-26 and later). The one owner of the session: its id,
 * the negotiated protocol version, and the headers derived from them. Every message is a POST;
 * responses arrive as JSON or as an SSE stream; the GET listener is opened on request.
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import type { Dispatcher, Pool } from 'undici';
import {
  isResponse,
  parseMessages,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../protocol/jsonrpc.js';
import type { ExchangeSignal } from '../../protocol/pending.js';
import { ProtocolError } from '../../core/errors.js';
import { acquirePool, hasRoom, releasePool, streamClient, streamPool } from '../pool.js';
import { redact, secretsOf } from '../../core/redact.js';
import { headerValue, lowercaseHeaders, mediaTypeEssence } from '../../core/headers.js';
import { describeMessage, type EventStreamResult } from '../http-requests.js';
import type { WholeJsonAnswer } from '../json-answer.js';
import { readBodyBounded } from '../../core/response-body.js';
import { modernRequestHeaders } from './modern-headers.js';
import { refusedPost, type Refused, type RefusalReader } from './refusal-bodies.js';
import { deleteSigned, getStreamSigned, postSigned, type SignedEndpoint } from './signed-requests.js';
import { followResponseStream, resumeResponseStream, type ResponseStreamSource } from './resume.js';
import { openSubscriptionStream } from './subscription-stream.js';
import { HttpCredentials, type HttpOptions } from '../http-credentials.js';
import { openListenerStream } from './listener-stream.js';
import {
  realTimers,
  type SendOptions,
  type SubscriptionStream,
  type Timers,
  type Transport,
  type TransportSink,
} from '../transport.js';
import { probeTimeoutMs } from '../../protocol/deadlines.js';

export interface HttpTransportOptions extends HttpOptions {
  /** Bound on waiting for the GET listener's response headers. */
  listenerOpenTimeoutMs?: number;
  /** Bound on the DELETE sent at close. */
  terminateTimeoutMs?: number;
}

/** Statuses that mean "this server offers no listening stream" on the optional GET. */
const NO_LISTENER_STATUSES = new Set([400, 404, 405, 406, 409]);
const ACCEPT_BOTH = 'application/json, text/event-stream';

export class StreamableHttpTransport implements Transport, ResponseStreamSource, RefusalReader {
  readonly kind = 'http' as const;
  readonly server: string;
  readonly timers: Timers;
  readonly maxMessageBytes: number;
  /** The origin's shared message pool (one per origin, see pool.ts). */
  readonly pool: Pool;
  /** Long-lived streams: a pool of their own, so they never starve the messages. */
  private readonly streams: Pool;
  private readonly path: string;
  /** The MCP endpoint: what DPoP proofs name (`htu`). */
  private readonly url: URL;
  readonly sink: TransportSink;
  private readonly origin: string;
  private readonly userHeaders: Record<string, string>;
  private readonly configSecrets: readonly string[];
  private readonly requestTimeoutMs: number;
  private readonly listenerOpenTimeoutMs: number;
  private readonly terminateTimeoutMs: number;
  private sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private generation = 0;
  /**
   * The last event id of this session's listening stream. A listener started again on the same
   * session (after an authorization or a probe took the connection out of `ready`) resumes from it.
   */
  private listenerEventId: string | undefined;
  /** From beginSession until `notifications/initialized` is sent: the handshake is under way. */
  private handshaking = false;
  /** The modern (2026-07-28) wire: no session, `Mcp-Method`/`Mcp-Name` per request, JSON-RPC errors in 4xx bodies. */
  private modern = false;
  private closed = false;
  private readonly credentials: HttpCredentials;
  /** What the signed POST, GET and DELETE go to (signed-requests.ts). */
  private readonly endpoint: SignedEndpoint;
  /** Rebuilt only when the session changes, then shared by every POST (no per-request allocation). */
  private postHeaders!: Record<string, string>;

  constructor(options: HttpTransportOptions) {
    this.server = options.server;
    this.origin = options.url.origin;
    this.path = `${options.url.pathname}${options.url.search}`;
    this.url = new URL(options.url.href);
    this.userHeaders = lowercaseHeaders(options.headers);
    this.configSecrets = options.secrets ?? [];
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.maxMessageBytes = options.maxMessageBytes;
    this.listenerOpenTimeoutMs = options.listenerOpenTimeoutMs ?? probeTimeoutMs(options);
    this.terminateTimeoutMs = options.terminateTimeoutMs ?? 2_000;
    this.sink = options.sink;
    this.timers = options.timers ?? realTimers;
    this.credentials = new HttpCredentials(options.auth, options.url, options.server);
    this.endpoint = { credentials: this.credentials, url: this.url, path: this.path, server: this.server };
    this.pool = acquirePool(this.origin);
    this.streams = streamPool(this.origin);
    this.rebuildHeaders();
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Nothing to open: every message is its own POST. */
  async open(): Promise<void> {}

  get sessionGeneration(): number {
    return this.generation;
  }

  get isModern(): boolean {
    return this.modern;
  }

  get hasSession(): boolean {
    return this.sessionId !== undefined;
  }

  beginSession(): void {
    this.generation++;
    this.listenerEventId = undefined;
    this.modern = false;
    this.handshaking = true;
    this.sessionId = undefined;
    this.protocolVersion = undefined;
    this.rebuildHeaders();
  }

  beginModern(protocolVersion: string): void {
    this.generation++;
    this.listenerEventId = undefined;
    this.modern = true;
    this.handshaking = false;
    this.sessionId = undefined;
    this.protocolVersion = protocolVersion;
    this.rebuildHeaders();
  }

  sessionToKeep(): string | undefined {
    return this.modern ? undefined : this.sessionId;
  }

  resumeSession(sessionId: string, protocolVersion: string): boolean {
    if (!isValidSessionId(sessionId)) return false;
    this.beginSession();
    this.handshaking = false;
    this.sessionId = sessionId;
    this.completeSession(protocolVersion);
    return true;
  }

  completeSession(protocolVersion: string): void {
    this.protocolVersion = protocolVersion;
    this.rebuildHeaders();
  }

  /** Headers for GET and DELETE: session and version, no content type. */
  sessionHeaders(accept: string, lastEventId?: string): Record<string, string> {
    const headers: Record<string, string> = { ...this.userHeaders, accept };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    return this.credentials.apply(headers);
  }

  async send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    const generation = this.generation;
    const carriedSession = this.sessionId !== undefined;
    const timeoutMs = options?.timeoutMs ?? this.requestTimeoutMs;
    const renewing = this.credentials.prepare();
    if (renewing) await renewing;
    if (this.credentials.stale) this.rebuildHeaders();
    const credentials = this.credentials.generation;
    const params = options?.headers;
    const pool = this.poolFor(message, options?.handshake);
    const requestId = 'method' in message && 'id' in message ? message.id : undefined;
    // A request's event-stream answer is read in the dispatch handler, but not the handshake's: its session comes first.
    const events = requestId === undefined || options?.handshake ? undefined : this;
    const exchange = { signal: options?.signal, timeoutMs, maxJsonBytes: this.maxMessageBytes, events, requestId };
    const response = await postSigned(
      this.endpoint,
      pool,
      () => (this.modern ? modernRequestHeaders(this.postHeaders, message, params) : this.postHeaders),
      message,
      exchange,
    );
    if (response.refused)
      return refusedPost(this, response, message, {
        handshake: options?.handshake,
        carriedSession,
        generation,
        credentials,
      });
    if (response.text !== undefined) return this.answeredWhole(response, message, options?.handshake);
    if (response.stream !== undefined) {
      const { stream } = response;
      // Its answer, and the messages before it, were delivered as they came.
      if (stream.answered || !this.sink.isAwaiting(requestId!)) return;
      return resumeResponseStream(this, stream, requestId!, generation, options?.signal, timeoutMs);
    }
    const { statusCode, headers, body } = response;
    if (statusCode === 202) {
      await body.dump();
      return;
    }
    if (statusCode < 200 || statusCode >= 300)
      return refusedPost(this, response, message, {
        handshake: options?.handshake,
        carriedSession,
        generation,
        credentials,
      });
    if (options?.handshake) {
      try {
        this.captureSession(headers['mcp-session-id']);
      } catch (error) {
        await body.dump().catch(() => {});
        throw error;
      }
    }
    if (requestId === undefined) {
      // A notification or response: 202 is the norm, but some servers answer 200 with a body.
      await body.dump();
      return;
    }
    const type = mediaTypeEssence(headers['content-type']);
    if (type === 'application/json')
      return this.answer(
        await readBodyBounded(body, headers['content-length'], this.maxMessageBytes, this.server),
        requestId,
      );
    if (type === 'text/event-stream') {
      await followResponseStream(this, body, requestId, generation, options?.signal, timeoutMs);
      return;
    }
    await body.dump();
    throw new ProtocolError(
      `unexpected content type ${JSON.stringify(headerValue(headers['content-type']) ?? '')} for ${describeMessage(message)} (expected application/json or text/event-stream)`,
      { server: this.server },
    );
  }

  /** RefusalReader: whether a refused POST is the credentials' to answer (401/403), read by refusal-bodies.ts. */
  credentialRefusal(statusCode: number, headers: Refused['headers'], what: string, generation: number) {
    return this.credentials.refusal(statusCode, headers, what, generation);
  }

  /** A 200 JSON answer read whole (json-answer.ts): the usual answer to a request. */
  private answeredWhole({ headers, text }: WholeJsonAnswer, message: JsonRpcMessage, handshake?: boolean): void {
    if (handshake) this.captureSession(headers['mcp-session-id']);
    const requestId = 'method' in message && 'id' in message ? message.id : undefined;
    if (requestId === undefined) return; // a notification or response answered 200 with a body: nobody waits for it
    this.answer(text, requestId);
  }

  /** A JSON body that must answer `requestId`. */
  private answer(text: string, requestId: RequestId): void {
    if (!this.deliver(text, requestId))
      throw new ProtocolError(`the JSON body did not answer request ${String(requestId)}`, { server: this.server });
  }

  /**
   * The handshake (`initialize`, then `notifications/initialized`) never waits behind exchanges
   * still in flight (an older session's, a slow server's): when the message pool has no room,
   * it goes through the unbounded stream pool.
   */
  private poolFor(message: JsonRpcMessage, handshake: boolean | undefined): Pool {
    if (!handshake) {
      if (!this.handshaking || !('method' in message) || message.method !== 'notifications/initialized')
        return this.pool;
      this.handshaking = false;
    }
    return hasRoom(this.pool) ? this.pool : this.streams;
  }

  /** Routes the messages in one JSON text; true when one of them answered `requestId`. */
  deliver(text: string, requestId?: RequestId): boolean {
    let answered = false;
    for (const message of parseMessages(text, this.server)) {
      if (requestId !== undefined && isResponse(message) && message.id === requestId) answered = true;
      this.sink.onMessage(message);
    }
    return answered;
  }

  async openListener(lastEventId: string | undefined): Promise<ListenerOpening> {
    const from = lastEventId ?? this.listenerEventId;
    return openListenerStream(this, this.generation, streamClient(this.origin), (client) =>
      this.getStream(from, undefined, this.listenerOpenTimeoutMs, 0, client),
    );
  }

  recordListenerEventId(id: string, generation: number): void {
    if (this.generation === generation) this.listenerEventId = id;
  }

  /** Modern era: the `subscriptions/listen` POST, its response stream kept open (subscription-stream.ts). */
  async openSubscription(message: JsonRpcRequest): Promise<SubscriptionStream> {
    const renewing = this.credentials.prepare();
    if (renewing) await renewing;
    if (this.credentials.stale) this.rebuildHeaders();
    const generation = this.credentials.generation;
    // A DPoP proof of its own, like every request (a nonce demand is a refusal: the listener retries).
    const signed = this.credentials.sign('POST', this.url, modernRequestHeaders(this.postHeaders, message));
    const headers = signed instanceof Promise ? await signed : signed;
    return openSubscriptionStream(
      this,
      this.streams,
      this.path,
      headers,
      message,
      this.listenerOpenTimeoutMs,
      (status, h) => this.credentials.refusal(status, h, describeMessage(message), generation),
    );
  }

  /** GET with the session headers; resolves once the response headers are in. `bodyTimeout` 0: no idle limit. */
  async getStream(
    lastEventId: string | undefined,
    signal: ExchangeSignal | undefined,
    headersTimeout: number,
    bodyTimeout = 0,
    dispatcher: Dispatcher = this.streams,
  ): Promise<EventStreamResult> {
    return getStreamSigned(
      this.endpoint,
      dispatcher,
      () => this.sessionHeaders('text/event-stream', lastEventId),
      { signal, headersTimeout, bodyTimeout },
      (text) => this.redact(text),
      NO_LISTENER_STATUSES,
    );
  }

  /** A bad event on a stream is reported, not fatal: the stream and the connection go on. */
  deliverSafely(data: string, requestId?: RequestId): boolean {
    try {
      return this.deliver(data, requestId);
    } catch (error) {
      this.sink.onStreamError(error as Error);
      return false;
    }
  }

  async terminateSession(): Promise<void> {
    if (this.sessionId === undefined) return;
    try {
      await deleteSigned(this.endpoint, this.pool, () => this.sessionHeaders(ACCEPT_BOTH), this.terminateTimeoutMs);
    } catch {
      // Best effort: a server that is down has no session to keep.
    } finally {
      this.sessionId = undefined;
      this.rebuildHeaders();
    }
  }

  async close(): Promise<void> {
    // Release our share of the pool once: a second close must not take another user's share.
    if (this.closed) return;
    this.closed = true;
    await releasePool(this.origin);
  }

  /** Servers sometimes echo the session id or a token in error text; none of it may reach an error. */
  redact(text: string): string {
    const secrets = secretsOf([
      { headers: this.userHeaders, url: `${this.origin}${this.path}`, values: this.configSecrets },
    ]);
    return redact(text, secrets, [this.sessionId, this.credentials.secret()]);
  }

  private captureSession(header: string | string[] | undefined): void {
    const value = sessionIdOf(header, this.server);
    if (value === undefined) return;
    this.sessionId = value;
    this.rebuildHeaders();
  }

  private rebuildHeaders(): void {
    const headers: Record<string, string> = {
      ...this.userHeaders,
      accept: ACCEPT_BOTH,
      'content-type': 'application/json',
    };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    this.postHeaders = this.credentials.track(headers);
  }
}

/**
 * The `Mcp-Session-Id` a server hands out: visible ASCII (0x21–0x7E), sent once, or it is refused
 * (DESIGN §5). Checked where a session begins: a handshake's answer, a stored session resumed.
 */

const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

const isValidSessionId = (id: string): boolean => VISIBLE_ASCII.test(id);

/** The session id of a handshake's answer: none (a stateless server), or a valid one; else a ProtocolError. */
function sessionIdOf(header: string | string[] | undefined, server: string): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
  if (value === undefined || !isValidSessionId(value)) {
    throw new ProtocolError(
      'the server sent an invalid Mcp-Session-Id (it must be visible ASCII, 0x21-0x7E, and sent once)',
      { server },
    );
  }
  return value;
}

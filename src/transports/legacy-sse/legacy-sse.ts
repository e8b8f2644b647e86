/**
 * Legacy HTTP+SSE transport (MCP 2024-11-05). `open()` GETs the SSE URL and waits (bounded) for
 * the `endpoint` event, which must be same-origin with the SSE URL; messages are POSTed there
 * and everything the server sends arrives as `message` events on the one stream. The stream is
 * the server session: when it ends, the transport is dead and the runtime reconnects with a new
 * stream and a new `initialize`. There is no resumability and no session header.
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import type { Dispatcher, Pool } from 'undici';
import { parseMessages, type JsonRpcMessage } from '../../protocol/jsonrpc.js';
import {
  ConnectionClosedError,
  describeError,
  EndpointTimeoutError,
  isAbortError,
  McpSupervisorError,
  ProtocolError,
  TransportError,
} from '../../core/errors.js';
import { redact, secretsOf } from '../../core/redact.js';
import { acquirePool, hasRoom, releasePool, streamPool } from '../pool.js';
import { lowercaseHeaders } from '../../core/headers.js';
import {
  busyError,
  describeMessage,
  isBusyStatus,
  openEventStream,
  postMessage,
  statusError,
} from '../http-requests.js';
import { describeErrorBody, discardBody } from '../../core/response-body.js';
import { readSseStream } from '../sse-reader.js';
import { HttpCredentials, type HttpOptions } from '../http-credentials.js';
import { realTimers, type SendOptions, type Timers, type Transport, type TransportSink } from '../transport.js';
import { probeTimeoutMs } from '../../protocol/deadlines.js';

type Body = Dispatcher.ResponseData['body'];

export interface LegacySseTransportOptions extends HttpOptions {
  /** Bound on the GET plus the wait for the `endpoint` event; default min(requestTimeoutMs, 10 s). */
  endpointTimeoutMs?: number;
}

interface OpenWaiter {
  resolve(): void;
  reject(error: Error): void;
  timer: unknown;
}

export class LegacySseTransport implements Transport {
  readonly kind = 'sse' as const;
  readonly server: string;
  readonly endpointTimeoutMs: number;
  private readonly url: URL;
  readonly pool: Pool;
  /** Long-lived streams: a pool of their own, so they never starve the messages. */
  private readonly streams: Pool;
  private readonly sink: TransportSink;
  private readonly timers: Timers;
  private readonly userHeaders: Record<string, string>;
  private readonly configSecrets: readonly string[];
  private postHeaders: Record<string, string>;
  private readonly credentials: HttpCredentials;
  private readonly requestTimeoutMs: number;
  private readonly maxMessageBytes: number;
  /** Aborts the GET while its headers are awaited (close or endpoint timeout). */
  private readonly controller = new AbortController();
  private opening: Promise<void> | undefined;
  private waiter: OpenWaiter | undefined;
  private stream: Body | undefined;
  /** Path and query of the `endpoint`, once it arrived; its query usually holds the session id. */
  private endpoint: URL | undefined;
  private streamEnded = false;
  private closed = false;
  private generation = 0;
  private negotiatedVersion: string | undefined;

  constructor(options: LegacySseTransportOptions) {
    this.url = options.url;
    this.server = options.server;
    this.sink = options.sink;
    this.timers = options.timers ?? realTimers;
    this.userHeaders = lowercaseHeaders(options.headers);
    this.configSecrets = options.secrets ?? [];
    this.credentials = new HttpCredentials(options.auth, options.url, options.server);
    this.postHeaders = this.credentials.track({ ...this.userHeaders, 'content-type': 'application/json' });
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.maxMessageBytes = options.maxMessageBytes;
    this.endpointTimeoutMs = options.endpointTimeoutMs ?? probeTimeoutMs(options);
    this.pool = acquirePool(this.url.origin);
    this.streams = streamPool(this.url.origin);
  }

  get isOpen(): boolean {
    return !this.closed && !this.streamEnded;
  }

  get sessionGeneration(): number {
    return this.generation;
  }

  /** The session id lives in the endpoint URL, never in a header. */
  get hasSession(): boolean {
    return false;
  }

  /** The negotiated protocol version of the current session (legacy sends it in no header). */
  get protocolVersion(): string | undefined {
    return this.negotiatedVersion;
  }

  /** Resolves once the `endpoint` event arrived; on any failure the transport is closed and released. */
  open(): Promise<void> {
    this.opening ??= new Promise<void>((resolve, reject) => {
      if (this.closed) {
        reject(this.closedError('open'));
        return;
      }
      const timer = this.timers.setTimeout(
        () => this.failOpen(new EndpointTimeoutError(this.endpointTimeoutMs, { server: this.server })),
        this.endpointTimeoutMs,
      );
      this.waiter = { resolve, reject, timer };
      this.requestStream().then(
        (body) => {
          if (!this.waiter) {
            discardBody(body);
            return;
          }
          this.stream = body;
          // A throwing sink is not the stream's failure; it must not become an unhandled rejection.
          this.follow(body).catch(() => {});
        },
        (error: unknown) => this.failOpen(isAbortError(error) ? this.closedError('open') : (error as Error)),
      );
    });
    return this.opening;
  }

  /** Modern requests carry their version in `_meta`; nothing on this transport changes but the generation. */
  beginModern(): void {
    this.generation++;
  }

  beginSession(): void {
    this.generation++;
    this.negotiatedVersion = undefined;
  }

  completeSession(protocolVersion: string): void {
    this.negotiatedVersion = protocolVersion;
  }

  /** POSTs one message to the endpoint; resolves once accepted (the response comes on the stream). */
  async send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    const endpoint = this.endpoint;
    if (!this.isOpen || endpoint === undefined) throw this.closedError(`send ${describeMessage(message)}`);
    const timeoutMs = options?.timeoutMs ?? this.requestTimeoutMs;
    const path = `${endpoint.pathname}${endpoint.search}`;
    const renewing = this.credentials.prepare();
    if (renewing) await renewing;
    if (this.credentials.stale)
      this.postHeaders = this.credentials.track({ ...this.userHeaders, 'content-type': 'application/json' });
    const credentials = this.credentials.generation;
    // The handshake never waits behind exchanges still in flight (see pool.ts).
    const pool = options?.handshake && !hasRoom(this.pool) ? this.streams : this.pool;
    let response: Dispatcher.ResponseData;
    for (let retried = false; ; retried = true) {
      const signed = this.credentials.sign('POST', endpoint, this.postHeaders);
      const postHeaders = signed instanceof Promise ? await signed : signed;
      response = await postMessage(
        pool,
        path,
        postHeaders,
        message,
        { signal: options?.signal, timeoutMs },
        this.server,
      );
      // A DPoP server asking for a proof with its nonce (RFC 9449 §9): once more.
      if (retried || !this.credentials.nonceRequested(response.statusCode, response.headers, endpoint)) break;
      await response.body.dump().catch(() => {});
    }
    const { statusCode, headers, body } = response;
    if (statusCode >= 200 && statusCode < 300) {
      await body.dump().catch(() => {});
      return;
    }
    const refusal = this.credentials.refusal(statusCode, headers, describeMessage(message), credentials);
    if (refusal) {
      await body.dump().catch(() => {});
      throw refusal;
    }
    const detail = await describeErrorBody(body, (text) => this.redact(text));
    if (isBusyStatus(statusCode)) throw busyError(statusCode, headers, message, detail, this.server);
    throw statusError(statusCode, message, detail, this.server);
  }

  /** The SSE stream is the transport's own: there is no separate listener. */
  async openListener(): Promise<ListenerOpening> {
    return { kind: 'unavailable', status: 0 };
  }

  /** Closing the stream ends the legacy session; there is nothing to DELETE. */
  async terminateSession(): Promise<void> {}

  async close(): Promise<void> {
    // Release our share of the pool once: a second close must not take another user's share.
    if (this.closed) return;
    this.closed = true;
    this.failOpen(this.closedError('open'));
    this.controller.abort();
    this.stream?.destroy();
    await releasePool(this.url.origin);
  }

  private async requestStream(): Promise<Body> {
    const generation = this.credentials.current;
    const signed = this.credentials.sign(
      'GET',
      this.url,
      this.credentials.apply({ ...this.userHeaders, accept: 'text/event-stream' }),
    );
    const opened = await openEventStream(
      this.streams,
      {
        path: `${this.url.pathname}${this.url.search}`,
        headers: signed instanceof Promise ? await signed : signed,
        signal: this.controller.signal,
        // The endpoint timer is the bound; this only backs it up (e.g. under a test's manual timers).
        headersTimeout: this.endpointTimeoutMs + 1_000,
        bodyTimeout: 0,
      },
      'the SSE stream',
      (text) => this.redact(text),
      this.server,
      undefined,
      (statusCode, headers) => {
        // A nonce asked for here is remembered; the stream is opened again after the refusal.
        this.credentials.nonceRequested(statusCode, headers, this.url);
        return this.credentials.refusal(statusCode, headers, 'the SSE stream', generation);
      },
    );
    if (opened.kind !== 'open') throw new Error('unreachable: no status means "unavailable" here');
    return opened.body;
  }

  /** Reads the stream until it ends; an end after open is a lost connection. */
  private async follow(body: Body): Promise<void> {
    let failure: unknown;
    try {
      await readSseStream(
        body,
        {
          onEvent: (data, event) => this.onEvent(data, event),
          onEventId: () => {},
          onRetry: () => {},
          isDone: () => this.closed,
        },
        this.maxMessageBytes,
        this.server,
      );
    } catch (error) {
      failure = error;
    }
    body.destroy();
    if (this.closed || this.streamEnded) return;
    const reason = failure === undefined ? '' : `: ${describeError(failure)}`;
    if (this.waiter) {
      const error =
        failure instanceof McpSupervisorError
          ? failure
          : new TransportError(`the SSE stream ended before its endpoint event${reason}`, undefined, {
              server: this.server,
              cause: failure,
            });
      this.failOpen(error);
      return;
    }
    this.streamEnded = true;
    this.sink.onClosed(
      new ConnectionClosedError(`the SSE stream closed${reason}`, {
        server: this.server,
        retryable: true,
        cause: failure,
      }),
    );
  }

  private onEvent(data: string, event: string | undefined): void {
    if (event === 'endpoint') {
      this.onEndpoint(data);
      return;
    }
    if (event !== undefined && event !== 'message') return;
    try {
      for (const message of parseMessages(data, this.server)) this.sink.onMessage(message);
    } catch (error) {
      this.sink.onStreamError(error as Error);
    }
  }

  private onEndpoint(data: string): void {
    if (!this.waiter) {
      this.sink.onStreamError(
        new ProtocolError('ignored a second endpoint event on the SSE stream', { server: this.server }),
      );
      return;
    }
    let endpoint: URL;
    try {
      endpoint = new URL(data.trim(), this.url);
    } catch {
      this.failOpen(new ProtocolError('the SSE endpoint event is not a valid URL', { server: this.server }));
      return;
    }
    if (endpoint.origin !== this.url.origin) {
      // Never POST (with the configured credentials) anywhere but the origin the user named.
      const message = `the SSE endpoint event points at origin ${endpoint.origin}, but the SSE stream is at origin ${this.url.origin}; refusing to send messages to another origin`;
      this.failOpen(new ProtocolError(message, { server: this.server }));
      return;
    }
    this.endpoint = endpoint;
    const waiter = this.waiter;
    this.waiter = undefined;
    this.timers.clearTimeout(waiter.timer);
    waiter.resolve();
  }

  /** Rejects a pending open() (no-op otherwise) and tears the transport down. */
  private failOpen(error: Error): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    this.timers.clearTimeout(waiter.timer);
    waiter.reject(error);
    void this.close();
  }

  private closedError(what: string): ConnectionClosedError {
    const state = this.closed ? 'closed' : this.streamEnded ? 'lost (the SSE stream closed)' : 'not open yet';
    return new ConnectionClosedError(`cannot ${what}: the legacy SSE transport is ${state}`, {
      server: this.server,
      retryable: true,
    });
  }

  /** Credentials and the endpoint's query (it carries the session id) never reach an error. */
  private redact(text: string): string {
    const query = this.endpoint ? [...this.endpoint.searchParams.values()] : [];
    return redact(text, secretsOf([{ headers: this.userHeaders, url: this.url, values: this.configSecrets }]), [
      ...query,
      this.credentials.secret(),
    ]);
  }
}

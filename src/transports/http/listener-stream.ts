/**
 * The listening GET stream: what the listener reads and cancels. It is read in undici's dispatch
 * handler, like a POST's answer stream (json-answer.ts): one object is the GET's handler, the SSE
 * parser's state and handlers, and the open stream, with no `BodyReadable`, stream state or
 * request handler per idle connection (~1 KB). Any answer but a 200 event stream goes on exactly
 * as `request()` answers it (undici's own handler takes over at the headers), so the statuses of
 * "no listening stream", refusals and errors are read where they always were (http-requests.ts).
 * Where undici keeps its internals elsewhere, the stream is a body read as before.
 */
import type { ListenerCursorHooks as CursorHooks, ListenerOpening } from '../../../machines/connection-host.js';
import type { Client, Dispatcher } from 'undici';
import { closeStreamClient, type Body } from '../../core/response-body.js';
import {
  dropReader,
  feedChunk,
  feedEnd,
  readSseStream,
  type EventReader,
  type FeedState,
  type SseHandlers,
} from '../sse-reader.js';
import { undiciInternals, type LegacyHandler } from '../undici-internals.js';
import type { EventStreamResult } from '../http-requests.js';

type OpenListener = Extract<ListenerOpening, { kind: 'open' }>;

type Abort = (reason?: Error) => void;
type Settle<T> = { resolve: (value: T) => void; reject: (error: Error) => void };

/** What the stream tells its transport (streamable-http.ts). */
export interface ListenerStreamOwner {
  readonly maxMessageBytes: number;
  readonly server: string | undefined;
  deliverSafely(data: string): void;
  /** The stream's last event id, kept for a resume if the session is still the one it opened in. */
  recordListenerEventId(id: string, generation: number): void;
}

const EVENT_STREAM = /^\s*text\/event-stream\s*(;|$)/i;

/** One `content-type`, an event stream (a type sent twice is left to undici's handler to report). */
function isEventStream(rawHeaders: Buffer[]): boolean {
  let found = false;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 12 || name.toString('latin1').toLowerCase() !== 'content-type') continue;
    if (found) return false;
    if (!EVENT_STREAM.test(rawHeaders[i + 1]!.toString('latin1'))) return false;
    found = true;
  }
  return found;
}

/**
 * The GET stream read in its dispatch handler. Until the headers it is the "dispatcher" whose
 * `request()` the GET goes through (http-requests.ts `openEventStream` calls only that), then the
 * open stream; the events of chunks that come before `read()` are delivered at once, what the
 * listener's hooks need is kept for it.
 */
class DispatchedListenerStream implements OpenListener, LegacyHandler, FeedState, SseHandlers {
  readonly kind = 'open';
  /** Called unbound by the listener when it stops: the stream's own client goes, its socket with it. */
  readonly cancel: () => void;
  private used = false;
  private opening: Settle<Dispatcher.ResponseData> | undefined = undefined;
  private options: Dispatcher.DispatchOptions | undefined = undefined;
  private abort: Abort | undefined = undefined;
  private context: unknown = undefined;
  /** undici's own handler, once the answer is not a 200 event stream. */
  private inner: LegacyHandler | undefined = undefined;
  private hooks: CursorHooks | undefined = undefined;
  private reading: Settle<void> | undefined = undefined;
  /** How it ended (undefined: open); `null`, cleanly. */
  private outcome: Error | null | undefined = undefined;
  /** Before `read()`: the last event id and `retry` the hooks have not heard yet. */
  private earlyEventId: string | undefined = undefined;
  private earlyRetryMs: number | undefined = undefined;

  // FeedState: where the stream is in its text (sse-reader.ts).
  readonly handlers: SseHandlers = this;
  readonly maxEventBytes: number;
  readonly server: string | undefined;
  reader: EventReader | undefined = undefined;
  started = false;
  endsInCr = false;
  betweenEvents = false;
  endsInLf = false;

  constructor(
    private readonly owner: ListenerStreamOwner,
    private readonly generation: number,
    private readonly client: Client,
  ) {
    this.maxEventBytes = owner.maxMessageBytes;
    this.server = owner.server;
    this.cancel = () => closeStreamClient(client);
  }

  /**
   * The GET, through this handler on the stream's own client. A GET sent again (refused for a
   * DPoP nonce or outdated credentials) gets a handler of its own; the open one is the body.
   */
  request(options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    const handler = this.used ? new DispatchedListenerStream(this.owner, this.generation, this.client) : this;
    handler.used = true;
    return new Promise((resolve, reject) => {
      handler.opening = { resolve, reject };
      handler.options = options;
      this.client.dispatch(options, handler as unknown as Dispatcher.DispatchHandler);
    });
  }

  read(hooks: CursorHooks): Promise<void> {
    this.hooks = hooks;
    if (this.earlyEventId !== undefined) hooks.onEventId(this.earlyEventId);
    if (this.earlyRetryMs !== undefined) hooks.onRetry(this.earlyRetryMs);
    this.earlyEventId = this.earlyRetryMs = undefined;
    if (this.outcome === null) return Promise.resolve();
    if (this.outcome) return Promise.reject(this.outcome);
    return new Promise((resolve, reject) => (this.reading = { resolve, reject }));
  }

  // LegacyHandler: undici's calls.
  onConnect(abort: Abort, context: unknown): void {
    this.abort = abort;
    this.context = context;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    const opening = this.opening!;
    const options = this.options!;
    this.opening = this.options = undefined;
    if (statusCode === 200 && isEventStream(rawHeaders)) {
      const headers = undiciInternals.request!.parseHeaders(rawHeaders);
      const body = this as unknown as Body;
      opening.resolve({ statusCode, statusText, headers, body, trailers: {}, opaque: null, context: {} });
      return true;
    }
    // Not an open stream: undici's request handler answers as `request()` does.
    const inner = new undiciInternals.request!.RequestHandler(options, (error, answer) =>
      error ? opening.reject(error) : opening.resolve(answer as Dispatcher.ResponseData),
    );
    this.inner = inner;
    inner.onConnect(this.abort!, this.context);
    return inner.onHeaders(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk: Buffer): boolean {
    if (this.inner) return this.inner.onData(chunk);
    if (this.outcome !== undefined) return true;
    const failure = feedChunk(this, chunk);
    if (!failure) return true;
    this.abort?.(failure); // undici calls onError with it at once
    return false;
  }

  onComplete(trailers: string[] | null): void {
    if (this.inner) return this.inner.onComplete(trailers);
    this.end(feedEnd(this) ?? null);
  }

  onError(error: Error): void {
    if (this.inner) return this.inner.onError(error);
    const opening = this.opening;
    if (opening) {
      this.opening = this.options = undefined;
      return opening.reject(error);
    }
    this.end(error);
  }

  // SseHandlers: the stream's events.
  onEvent(data: string): void {
    this.owner.deliverSafely(data);
  }

  onEventId(id: string): void {
    this.owner.recordListenerEventId(id, this.generation);
    if (this.hooks) this.hooks.onEventId(id);
    else this.earlyEventId = id;
  }

  onRetry(ms: number): void {
    if (this.hooks) this.hooks.onRetry(ms);
    else this.earlyRetryMs = ms;
  }

  /** Ended or failed: its socket goes with it (a server that ends the stream may keep it alive). */
  private end(outcome: Error | null): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    dropReader(this);
    this.cancel();
    const reading = this.reading;
    this.reading = undefined;
    if (!reading) return;
    if (outcome) reading.reject(outcome);
    else reading.resolve();
  }
}

/** Where undici keeps its internals elsewhere: the stream is a body, read by `readSseStream`. */
class BodyListenerStream implements OpenListener, SseHandlers {
  readonly kind = 'open';
  readonly cancel: () => void;
  private hooks: CursorHooks | undefined = undefined;

  constructor(
    private readonly owner: ListenerStreamOwner,
    private readonly body: Body,
    private readonly generation: number,
    client: Client,
  ) {
    this.cancel = () => closeStreamClient(client, body);
  }

  read(hooks: CursorHooks): Promise<void> {
    this.hooks = hooks;
    const reading = readSseStream(this.body, this, this.owner.maxMessageBytes, this.owner.server);
    reading.then(this.cancel, this.cancel);
    return reading;
  }

  onEvent(data: string): void {
    this.owner.deliverSafely(data);
  }

  onEventId(id: string): void {
    this.owner.recordListenerEventId(id, this.generation);
    this.hooks?.onEventId(id);
  }

  onRetry(ms: number): void {
    this.hooks?.onRetry(ms);
  }
}

/** The listening GET on a client of its own (pool.ts: streamClient): the client goes when the stream does. */
export async function openListenerStream(
  owner: ListenerStreamOwner,
  generation: number,
  client: Client,
  open: (dispatcher: Dispatcher) => Promise<EventStreamResult>,
): Promise<ListenerOpening> {
  const dispatcher = undiciInternals.request ? new DispatchedListenerStream(owner, generation, client) : client;
  let response: EventStreamResult;
  try {
    response = await open(dispatcher as unknown as Dispatcher);
  } catch (error) {
    closeStreamClient(client);
    throw error;
  }
  if (response.kind !== 'open') {
    closeStreamClient(client);
    return response;
  }
  const { body } = response;
  if (body instanceof DispatchedListenerStream) return body;
  return new BodyListenerStream(owner, body, generation, client);
}

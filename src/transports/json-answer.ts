/**
 * A POST's answer read in undici's dispatch handler, with no body stream, no `body.text()` and no
 * AsyncResource per request:
 * - a bounded JSON body (200, `application/json`, a Content-Length within `maxMessageBytes`: what
 *   nearly every `tools/call` gets) is read whole (−6–7 µs of client CPU per call at 64 in flight,
 *   measured against `pool.request` on the bench server);
 * - an event stream (200, `text/event-stream`) answering a request, when the caller names where
 *   its events go (`AnswerEvents`): each chunk is fed to the reused SSE parser (sse-reader.ts), the
 *   events are delivered as they come (notifications and requests first, then the answer, which
 *   settles the call), and what resuming needs (event id, `retry`, how it ended) comes back in
 *   `stream`: the caller resumes a stream that ended before its answer (http/resume.ts).
 * - a refusal (4xx) with a JSON body of at most 8 KB (declared, or counted as it comes) is read
 *   whole too (`refused`): the era probe's answer from every 2025-era server, at every start.
 * Every other answer (202, 5xx, unbounded bodies) goes on exactly as `pool.request` answers it:
 * undici's own request handler takes over at the response headers.
 *
 * undici's request handler and header parser are not part of its public API: they are looked up
 * once, and when they are not where undici 7 keeps them, `pool.request` is used for every POST.
 */
import type { Dispatcher, Pool } from 'undici';
import type { ExchangeSignal } from '../protocol/pending.js';
import type { RequestId } from '../protocol/jsonrpc.js';
import { dropReader, feedChunk, feedEnd, type EventReader, type FeedState, type SseHandlers } from './sse-reader.js';
import type { TransportSink } from './transport.js';
import { undiciInternals, type LegacyHandler, type UndiciRequestInternals } from './undici-internals.js';

/** A POST's answer read whole: its JSON text instead of a body. */
export interface WholeJsonAnswer {
  statusCode: 200;
  headers: Dispatcher.ResponseData['headers'];
  body?: undefined;
  text: string;
  refused?: undefined;
}

/**
 * A refusal (4xx) with a small JSON body, read whole: what a 2025-era server answers the era
 * probe, and a modern server's JSON-RPC error. `text` is empty when the body could not be read
 * (the refusal is then described by its status alone, as a body read after the fact would be).
 */
export interface RefusedJsonAnswer {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body?: undefined;
  text: string;
  refused: true;
}

/** The largest refusal body read whole (a larger one goes to undici's handler and is described by its status). */
export const REFUSAL_BODY_LIMIT = 8 * 1024;

/** Where the events of a request's answer stream go (the Streamable HTTP transport). */
export interface AnswerEvents {
  readonly server: string;
  readonly maxMessageBytes: number;
  readonly sink: Pick<TransportSink, 'isAwaiting' | 'onStreamError'>;
  /** Routes the messages of one event; true when one answered `requestId`. */
  deliver(text: string, requestId: RequestId): boolean;
}

/** How a request's answer stream went, read in the dispatch handler: what resuming it needs. */
export interface StreamProgress {
  /** An event answered the request. */
  readonly answered: boolean;
  /** The last event id (priming events included): where a resume starts. */
  readonly lastEventId: string | undefined;
  readonly retryMs: number | undefined;
  /** An event id came on this stream. */
  readonly progressed: boolean;
  /** An event that could not be delivered (reported to the sink; the stream went on). */
  readonly badEvent: Error | undefined;
  /** Why the stream stopped before its end (it broke, an event was too large, the request was released). */
  readonly failure: Error | undefined;
}

/** A request's answer stream, read to its end (or to its answer) in the dispatch handler. */
export interface StreamedAnswer {
  statusCode: 200;
  headers: Dispatcher.ResponseData['headers'];
  body?: undefined;
  text?: undefined;
  refused?: undefined;
  stream: StreamProgress;
}

export type PostAnswer =
  | (Dispatcher.ResponseData & { text?: undefined; stream?: undefined; refused?: undefined })
  | (WholeJsonAnswer & { stream?: undefined })
  | (RefusedJsonAnswer & { stream?: undefined })
  | StreamedAnswer;

/** `readingBody`: the error came after the answer's headers, while its body was read whole. */
type Callback = (error: Error | null, answer?: PostAnswer, readingBody?: boolean) => void;
type Abort = (reason?: Error) => void;

const internals = undiciInternals.request;

/** Whether this undici keeps the internals where undici 7 does (a test guards it on upgrades). */
export const readsJsonWhole = internals !== undefined;

const APPLICATION_JSON = /^\s*application\/json\s*(;|$)/i;
const EVENT_STREAM = /^\s*text\/event-stream\s*(;|$)/i;

/** What a 200 answer is, for the handler: read whole, read as events, or left to undici's handler. */
const WHOLE_JSON = 1;
const EVENTS = 2;
const OTHER = 0;
/** JSON with no Content-Length (chunked): read whole only as a refusal, counted as it comes. */
const CHUNKED_JSON = 3;

/**
 * Reads the raw headers without parsing them all (a JSON answer's are parsed once, when taken):
 * `application/json` with a Content-Length within `maxBytes` is WHOLE_JSON, `text/event-stream`
 * is EVENTS, anything else (a type sent twice, no length) OTHER.
 */
function answerKind(rawHeaders: Buffer[], maxBytes: number): number {
  let type: string | undefined;
  let length = Number.NaN;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
      if (type !== undefined) return OTHER; // sent twice: undici's handler decides
      const value = rawHeaders[i + 1]!.toString('latin1');
      type = APPLICATION_JSON.test(value) ? 'json' : EVENT_STREAM.test(value) ? 'events' : '';
    } else if (name.length === 14 && name.toString('latin1').toLowerCase() === 'content-length') {
      if (!Number.isNaN(length)) return OTHER;
      length = Number(rawHeaders[i + 1]!.toString('latin1'));
    }
  }
  if (type === 'json')
    return length >= 0 && length <= maxBytes ? WHOLE_JSON : Number.isNaN(length) ? CHUNKED_JSON : OTHER;
  return type === 'events' ? EVENTS : OTHER;
}

function isSmallJson(kind: number): boolean {
  return kind === WHOLE_JSON || kind === CHUNKED_JSON;
}

/** The abort of the exchange, while the answer is read here; `this` is the handler (no closure per request). */
function onSignalAbort(this: AnswerHandler): void {
  this.abortWith(this.signal!.reason as Error);
}

/**
 * Answer streams that had their answer, checked once the socket read that brought it is done: one
 * still going on is released (its socket with it), as a body would be. One microtask per batch and
 * no closure per stream (a `process.nextTick` per answer was ~2 µs of client CPU per call at 64).
 */
const answeredStreams: AnswerHandler[] = [];

function releaseAnswered(): void {
  for (const handler of answeredStreams)
    if (!handler.ended) handler.abortWith(new Error('the answer stream went on after its answer'));
  answeredStreams.length = 0;
}

/**
 * One POST's dispatch handler: reads a bounded JSON answer whole, a request's event stream event
 * by event (it is the stream's FeedState and SseHandlers: no closure per request), and hands any
 * other answer to undici's own handler.
 */
class AnswerHandler implements LegacyHandler, FeedState, SseHandlers, StreamProgress {
  private abort: Abort | undefined = undefined;
  private context: unknown = undefined;
  private reason: Error | undefined = undefined;
  /** undici's own handler, once the answer is not one read here. */
  private inner: LegacyHandler | undefined = undefined;
  private headers: Dispatcher.ResponseData['headers'] | undefined = undefined;
  private chunks: Buffer[] | undefined = undefined;
  private readonly listener: (() => void) | undefined;
  /** The answer is an event stream, read here. */
  private streaming = false;
  /** The status of a refusal read whole here (0: not one). */
  private refusedStatus = 0;
  /** Bytes of a refusal's body so far: past REFUSAL_BODY_LIMIT it is dropped (described by its status). */
  private refusalBytes = 0;
  /** The stream's answer came (or its request was settled elsewhere): the rest is not read. */
  private done = false;
  /** The exchange is over (completed or failed). */
  ended = false;

  // FeedState: where the event stream is in its text (sse-reader.ts).
  readonly handlers: SseHandlers = this;
  maxEventBytes = 0;
  reader: EventReader | undefined = undefined;
  started = false;
  endsInCr = false;
  betweenEvents = false;
  endsInLf = false;

  // StreamProgress: how the event stream went.
  answered = false;
  lastEventId: string | undefined = undefined;
  retryMs: number | undefined = undefined;
  progressed = false;
  badEvent: Error | undefined = undefined;
  failure: Error | undefined = undefined;

  constructor(
    private readonly internals: UndiciRequestInternals,
    private readonly options: Dispatcher.RequestOptions,
    readonly signal: ExchangeSignal | undefined,
    private readonly maxBytes: number,
    private callback: Callback | undefined,
    private readonly events: AnswerEvents | undefined,
    private readonly requestId: RequestId | undefined,
  ) {
    if (signal?.aborted) this.reason = signal.reason as Error;
    else if (signal) {
      this.listener = onSignalAbort.bind(this);
      signal.addEventListener('abort', this.listener, { once: true });
    }
  }

  get server(): string | undefined {
    return this.events?.server;
  }

  abortWith(reason: Error): void {
    this.reason = reason;
    this.abort?.(reason);
  }

  onConnect(abort: Abort, context: unknown): void {
    if (this.reason) return abort(this.reason);
    this.abort = abort;
    this.context = context;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode === 200) {
      const kind = answerKind(rawHeaders, this.maxBytes);
      if (kind === WHOLE_JSON) {
        this.headers = this.internals.parseHeaders(rawHeaders);
        this.chunks = [];
        return true;
      }
      if (kind === EVENTS && this.events !== undefined && this.requestId !== undefined) {
        this.headers = this.internals.parseHeaders(rawHeaders);
        this.streaming = true;
        this.maxEventBytes = this.events.maxMessageBytes;
        return true;
      }
    } else if (statusCode >= 400 && statusCode < 500 && isSmallJson(answerKind(rawHeaders, REFUSAL_BODY_LIMIT))) {
      this.headers = this.internals.parseHeaders(rawHeaders);
      this.chunks = [];
      this.refusedStatus = statusCode;
      return true;
    }
    // Not ours to read: undici's request handler answers as `pool.request` does.
    this.unlisten();
    const inner = new this.internals.RequestHandler(this.options, (error, answer) => this.settle(error, answer));
    this.inner = inner;
    inner.onConnect(this.abort!, this.context);
    return inner.onHeaders(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk: Buffer): boolean {
    if (this.inner) return this.inner.onData(chunk);
    if (!this.streaming) {
      if (this.refusedStatus !== 0 && (this.refusalBytes += chunk.length) > REFUSAL_BODY_LIMIT) this.chunks!.length = 0;
      else this.chunks!.push(chunk);
      return true;
    }
    if (this.done) return true;
    const failure = feedChunk(this, chunk);
    if (failure) {
      this.failure = failure;
      this.abortWith(failure); // undici calls onError at once
      return false;
    }
    if (this.answered || !this.events!.sink.isAwaiting(this.requestId!)) {
      this.done = true;
      dropReader(this);
      // The end usually arrives with the last chunk, in the same read: a stream still open after it is released.
      if (answeredStreams.push(this) === 1) queueMicrotask(releaseAnswered);
    }
    return true;
  }

  onComplete(trailers: string[] | null): void {
    if (this.inner) return this.inner.onComplete(trailers);
    this.ended = true;
    this.unlisten();
    if (this.streaming) {
      if (!this.done) this.failure = feedEnd(this);
      dropReader(this);
      this.settle(null, { statusCode: 200, headers: this.headers!, stream: this });
      return;
    }
    const chunks = this.chunks!;
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    if (this.refusedStatus !== 0) {
      const whole = this.refusalBytes <= REFUSAL_BODY_LIMIT ? text : '';
      this.settle(null, { statusCode: this.refusedStatus, headers: this.headers!, text: whole, refused: true });
    } else this.settle(null, { statusCode: 200, headers: this.headers!, text });
  }

  onError(error: Error): void {
    if (this.inner) return this.inner.onError(error);
    this.ended = true;
    this.unlisten();
    if (this.streaming) {
      if (!this.done) this.failure ??= error;
      dropReader(this);
      this.settle(null, { statusCode: 200, headers: this.headers!, stream: this });
      return;
    }
    if (this.refusedStatus !== 0) {
      this.settle(null, { statusCode: this.refusedStatus, headers: this.headers!, text: '', refused: true });
      return;
    }
    this.settle(error, undefined, this.headers !== undefined);
  }

  // SseHandlers: the events of the answer stream, as the parser dispatches them.
  onEvent(data: string): void {
    try {
      if (this.events!.deliver(data, this.requestId!)) this.answered = true;
    } catch (error) {
      this.badEvent = error as Error;
      this.events!.sink.onStreamError(this.badEvent);
    }
  }

  onEventId(id: string): void {
    this.lastEventId = id;
    this.progressed = true;
  }

  onRetry(ms: number): void {
    this.retryMs = ms;
  }

  /** Calls back once; undici's handler calls it for the answers it takes over. */
  private settle(error: Error | null, answer?: PostAnswer, readingBody?: boolean): void {
    const callback = this.callback;
    this.callback = undefined;
    callback?.(error, answer, readingBody);
  }

  private unlisten(): void {
    if (this.listener) this.signal!.removeEventListener('abort', this.listener);
  }
}

/**
 * Sends one request; a bounded JSON answer comes back read whole (`text`), an event stream
 * answering `requestId` read into `events` (`stream`), any other answer as `pool.request` gives
 * it. Errors go to `callback`, never thrown.
 */
export function requestAnswer(
  pool: Pool,
  options: Dispatcher.RequestOptions,
  signal: ExchangeSignal | undefined,
  maxJsonBytes: number | undefined,
  callback: Callback,
  events?: AnswerEvents,
  requestId?: RequestId,
): void {
  if (internals === undefined || maxJsonBytes === undefined) {
    pool.request(options, callback as (error: Error | null, data: Dispatcher.ResponseData) => void);
    return;
  }
  try {
    const handler = new AnswerHandler(internals, options, signal, maxJsonBytes, callback, events, requestId);
    pool.dispatch(options, handler as unknown as Dispatcher.DispatchHandler);
  } catch (error) {
    callback(error as Error);
  }
}

/**
 * A POST whose answer is a bounded JSON body (200, `application/json`, a Content-Length within
 * `maxMessageBytes`: what nearly every `tools/call` gets) is read whole in undici's dispatch
 * handler: no body stream, no `body.text()`, no AsyncResource per request (−6–7 µs of client CPU
 * per call at 64 in flight, measured against `pool.request` on the bench server). Every other
 * answer (202, errors, event streams, unbounded bodies) goes on exactly as `pool.request` answers
 * it: undici's own request handler takes over at the response headers.
 *
 * undici's request handler and header parser are not part of its public API: they are looked up
 * once, and when they are not where undici 7 keeps them, `pool.request` is used for every POST.
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Pool } from 'undici';
import type { ExchangeSignal } from '../protocol/pending.js';

/** A POST's answer read whole: its JSON text instead of a body. */
export interface WholeJsonAnswer {
  statusCode: 200;
  headers: Dispatcher.ResponseData['headers'];
  body?: undefined;
  text: string;
}

export type PostAnswer = (Dispatcher.ResponseData & { text?: undefined }) | WholeJsonAnswer;

/** `readingBody`: the error came after the answer's headers, while its body was read whole. */
type Callback = (error: Error | null, answer?: PostAnswer, readingBody?: boolean) => void;
type Abort = (reason?: Error) => void;

interface LegacyHandler {
  onConnect(abort: Abort, context: unknown): void;
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: string[] | null): void;
  onError(error: Error): void;
}

interface UndiciInternals {
  RequestHandler: new (options: Dispatcher.RequestOptions, callback: Callback) => LegacyHandler;
  parseHeaders(rawHeaders: Buffer[]): Record<string, string | string[] | undefined>;
}

function undiciInternals(): UndiciInternals | undefined {
  try {
    const require = createRequire(import.meta.url);
    const { RequestHandler } = require('undici/lib/api/api-request.js') as Partial<UndiciInternals>;
    const { parseHeaders } = require('undici/lib/core/util.js') as Partial<UndiciInternals>;
    if (typeof RequestHandler !== 'function' || typeof parseHeaders !== 'function') return undefined;
    return { RequestHandler, parseHeaders };
  } catch {
    return undefined;
  }
}

const internals = undiciInternals();

/** Whether this undici keeps the internals where undici 7 does (a test guards it on upgrades). */
export const readsJsonWhole = internals !== undefined;

const APPLICATION_JSON = /^application\/json\s*(;|$)/i;

/**
 * Whether the raw headers say `application/json` with a Content-Length within `maxBytes`, read
 * without parsing them all: an event stream's headers are parsed once, by undici's handler.
 */
function isBoundedJson(rawHeaders: Buffer[], maxBytes: number): boolean {
  let json = false;
  let length = Number.NaN;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
      if (json || !APPLICATION_JSON.test(rawHeaders[i + 1]!.toString('latin1'))) return false;
      json = true;
    } else if (name.length === 14 && name.toString('latin1').toLowerCase() === 'content-length') {
      if (!Number.isNaN(length)) return false; // sent twice: undici's handler decides
      length = Number(rawHeaders[i + 1]!.toString('latin1'));
    }
  }
  return json && length >= 0 && length <= maxBytes;
}

/** The abort of the exchange, while the answer is read whole; `this` is the handler (no closure per request). */
function onSignalAbort(this: WholeJsonHandler): void {
  this.abortWith(this.signal!.reason as Error);
}

class WholeJsonHandler implements LegacyHandler {
  private abort: Abort | undefined = undefined;
  private context: unknown = undefined;
  private reason: Error | undefined = undefined;
  /** undici's own handler, once the answer is not a bounded JSON body. */
  private inner: LegacyHandler | undefined = undefined;
  private headers: Dispatcher.ResponseData['headers'] | undefined = undefined;
  private chunks: Buffer[] = [];
  private readonly listener: (() => void) | undefined;

  constructor(
    private readonly internals: UndiciInternals,
    private readonly options: Dispatcher.RequestOptions,
    readonly signal: ExchangeSignal | undefined,
    private readonly maxBytes: number,
    private callback: Callback | undefined,
  ) {
    if (signal?.aborted) this.reason = signal.reason as Error;
    else if (signal) {
      this.listener = onSignalAbort.bind(this);
      signal.addEventListener('abort', this.listener, { once: true });
    }
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
    if (statusCode === 200 && isBoundedJson(rawHeaders, this.maxBytes)) {
      this.headers = this.internals.parseHeaders(rawHeaders);
      return true;
    }
    // Not ours to read whole: undici's request handler answers as `pool.request` does.
    this.unlisten();
    const inner = new this.internals.RequestHandler(this.options, (error, answer) => this.settle(error, answer));
    this.inner = inner;
    inner.onConnect(this.abort!, this.context);
    return inner.onHeaders(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk: Buffer): boolean {
    if (this.inner) return this.inner.onData(chunk);
    this.chunks.push(chunk);
    return true;
  }

  onComplete(trailers: string[] | null): void {
    if (this.inner) return this.inner.onComplete(trailers);
    this.unlisten();
    const chunks = this.chunks;
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    this.settle(null, { statusCode: 200, headers: this.headers!, text });
  }

  onError(error: Error): void {
    if (this.inner) return this.inner.onError(error);
    this.unlisten();
    this.settle(error, undefined, this.headers !== undefined);
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
 * Sends one request; a bounded JSON answer comes back read whole (`text`), any other answer as
 * `pool.request` gives it. Errors go to `callback`, never thrown.
 */
export function requestAnswer(
  pool: Pool,
  options: Dispatcher.RequestOptions,
  signal: ExchangeSignal | undefined,
  maxJsonBytes: number | undefined,
  callback: Callback,
): void {
  if (internals === undefined || maxJsonBytes === undefined) {
    pool.request(options, callback as (error: Error | null, data: Dispatcher.ResponseData) => void);
    return;
  }
  try {
    const handler = new WholeJsonHandler(internals, options, signal, maxJsonBytes, callback);
    pool.dispatch(options, handler as unknown as Dispatcher.DispatchHandler);
  } catch (error) {
    callback(error as Error);
  }
}

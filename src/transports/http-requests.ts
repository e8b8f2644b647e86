/**
 * The two HTTP exchanges both HTTP transports make: POST one JSON-RPC message, and GET an event
 * stream. undici failures become typed errors; a non-2xx answer names the message it refused.
 */
import type { Dispatcher, Pool } from 'undici';
import { isAbortError, ProtocolError, TransportError } from '../core/errors.js';
import { ServerBusyError } from '../core/retry-after.js';
import { encodeMessage, type JsonRpcMessage, type RequestId } from '../protocol/jsonrpc.js';
import type { ExchangeSignal } from '../protocol/pending.js';
import { headerValue, mediaTypeEssence } from '../core/headers.js';
import { describeErrorBody, type Body } from '../core/response-body.js';
import { exchangeError } from '../core/response-body.js';
import { retryAfterMs } from '../core/retry-after.js';
import { requestAnswer, type AnswerEvents, type PostAnswer } from './json-answer.js';

/**
 * undici takes any object with `addEventListener`/`removeEventListener`, `aborted` and `reason`
 * as a request's signal (lib/api/api-request.js), not only an AbortSignal; its types say
 * AbortSignal. A pending request is one (see protocol/pending.ts).
 */
function undiciSignal(signal: ExchangeSignal | undefined): AbortSignal | undefined {
  return signal as AbortSignal | undefined;
}

/** `'tools/call'` or `a response`, for error messages. */
export function describeMessage(message: JsonRpcMessage): string {
  return 'method' in message ? `'${message.method}'` : 'a response';
}

/** How one POST is bounded, and which answers are read for the caller (see postForAnswer). */
export interface PostOptions {
  signal?: ExchangeSignal | undefined;
  timeoutMs: number;
  maxJsonBytes?: number | undefined;
  /** Where the events of an event-stream answer to request `requestId` go (with `maxJsonBytes`). */
  events?: AnswerEvents | undefined;
  requestId?: RequestId | undefined;
}

/**
 * POSTs one JSON-RPC message, bounded by `timeoutMs` and released when `signal` fires; every
 * failure is typed (network failures become TransportErrors). With `maxJsonBytes`, a 200 JSON
 * answer within it comes back read whole (`text`, json-answer.ts); with `events` too, an event
 * stream answering `requestId` comes back read (`stream`); any other answer with its body.
 * One promise per POST and no async frame of ours between undici's answer and the caller.
 */
export function postForAnswer(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  message: JsonRpcMessage,
  options: PostOptions,
  server: string,
): Promise<PostAnswer> {
  const body = encodeMessage(message, server);
  if (typeof body !== 'string') return Promise.reject(body);
  const request: Dispatcher.RequestOptions = {
    path,
    method: 'POST',
    headers,
    body,
    signal: undiciSignal(options.signal),
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  };
  return new Promise((resolve, reject) => {
    requestAnswer(
      pool,
      request,
      options.signal,
      options.maxJsonBytes,
      (error, answer, readingBody) => {
        // The same words as a body read with readBodyBounded: the request went out, its answer was cut short.
        if (error)
          reject(
            exchangeError(
              readingBody ? 'reading the response body' : `POST ${describeMessage(message)}`,
              error,
              server,
            ),
          );
        else resolve(answer!);
      },
      options.events,
      options.requestId,
    );
  });
}

/** `postForAnswer` with every answer's body left to the caller (no answer is read whole). */
export function postMessage(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  message: JsonRpcMessage,
  options: { signal?: ExchangeSignal | undefined; timeoutMs: number },
  server: string,
): Promise<Dispatcher.ResponseData> {
  const { signal, timeoutMs } = options;
  return postForAnswer(pool, path, headers, message, { signal, timeoutMs }, server) as Promise<Dispatcher.ResponseData>;
}

/** A non-2xx answer to a message, with the (already redacted) detail from its body. */
export function statusError(
  statusCode: number,
  message: JsonRpcMessage,
  detail: string | undefined,
  server: string,
  /** The session the refused message carried, if any: a 400 on a session is evidence about it. */
  sessionGeneration?: number,
): TransportError {
  return new TransportError(
    `HTTP ${statusCode} for ${describeMessage(message)}${detail ? `: ${detail}` : ''}`,
    statusCode,
    {
      server,
      body: detail,
      sessionGeneration,
    },
  );
}

/** 429 and 503: the server asks the client to wait (backpressure); it did not process the message. */
export function isBusyStatus(statusCode: number): statusCode is 429 | 503 {
  return statusCode === 429 || statusCode === 503;
}

/** A 429 or 503 answer to a message, with the wait its `Retry-After` asked for and the (already redacted) detail. */
export function busyError(
  statusCode: 429 | 503,
  headers: Dispatcher.ResponseData['headers'],
  message: JsonRpcMessage,
  detail: string | undefined,
  server: string,
): ServerBusyError {
  const wait = retryAfterMs(headers['retry-after']);
  const asked = wait === undefined ? '' : ` (Retry-After: ${Math.ceil(wait / 1000)} s)`;
  return new ServerBusyError(
    `HTTP ${statusCode} for ${describeMessage(message)}${asked}${detail ? `: ${detail}` : ''}`,
    statusCode,
    wait,
    { server, body: detail },
  );
}

export type EventStreamResult = { kind: 'open'; body: Body } | { kind: 'unavailable'; status: number };

const NO_STATUSES: ReadonlySet<number> = new Set();

/**
 * GETs a `text/event-stream` and checks its answer: statuses in `unavailable` mean "no stream
 * here", other non-2xx statuses and other content types are typed errors naming `what`.
 */
export async function openEventStream(
  pool: Dispatcher,
  request: {
    path: string;
    headers: Record<string, string>;
    signal?: ExchangeSignal | undefined;
    headersTimeout: number;
    bodyTimeout: number;
  },
  what: string,
  redact: (text: string) => string,
  server: string,
  unavailable: ReadonlySet<number> = NO_STATUSES,
  /** A typed refusal for this status (401/403 challenges), thrown instead of the generic error. */
  refusal?: (statusCode: number, headers: Dispatcher.ResponseData['headers']) => Error | undefined,
): Promise<EventStreamResult> {
  let response: Dispatcher.ResponseData;
  try {
    response = await pool.request({ ...request, signal: undiciSignal(request.signal), method: 'GET' });
  } catch (error) {
    if (isAbortError(error)) throw error; // the legacy transport's own controller: it says why
    throw exchangeError(`GET ${what}`, error, server);
  }
  const { statusCode, headers, body } = response;
  if (unavailable.has(statusCode)) {
    await body.dump().catch(() => {});
    return { kind: 'unavailable', status: statusCode };
  }
  if (statusCode < 200 || statusCode >= 300) {
    const refused = refusal?.(statusCode, headers);
    if (refused) {
      await body.dump().catch(() => {});
      throw refused;
    }
    const detail = await describeErrorBody(body, redact);
    // Backpressure: the listener waits out its Retry-After (runtime/session/handshake-busy.ts).
    if (isBusyStatus(statusCode)) {
      const wait = retryAfterMs(headers['retry-after']);
      throw new ServerBusyError(`HTTP ${statusCode} for ${what}${detail ? `: ${detail}` : ''}`, statusCode, wait, {
        server,
        body: detail,
      });
    }
    throw new TransportError(`HTTP ${statusCode} for ${what}${detail ? `: ${detail}` : ''}`, statusCode, {
      server,
      body: detail,
    });
  }
  if (mediaTypeEssence(headers['content-type']) !== 'text/event-stream') {
    await body.dump().catch(() => {});
    throw new ProtocolError(
      `${what} answered ${JSON.stringify(headerValue(headers['content-type']) ?? '')}, not text/event-stream`,
      { server },
    );
  }
  return { kind: 'open', body };
}

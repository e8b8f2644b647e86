/**
 * The modern (2026-07-28) listen over Streamable HTTP: `subscriptions/listen` is a POST whose
 * response is a long-lived SSE stream (it replaces the GET stream). Its messages go to the sink
 * like any other; closing the stream is the cancellation. No `Last-Event-ID`: a broken listen is
 * issued again as a new request by the listener.
 */
import type { Dispatcher, Pool } from 'undici';
import { ProtocolError } from '../../core/errors.js';
import { encodeMessage, type JsonRpcRequest, type RequestId } from '../../protocol/jsonrpc.js';
import { exchangeError } from '../../core/response-body.js';
import { headerValue, mediaTypeEssence } from '../../core/headers.js';
import { busyError, isBusyStatus, statusError } from '../http-requests.js';
import { discardBody, readBodyBounded } from '../../core/response-body.js';
import { readSseStream } from '../sse-reader.js';
import type { SubscriptionStream } from '../transport.js';

const ERROR_BODY_LIMIT = 8 * 1024;

/** What opening a listen needs from the HTTP transport. */
export interface SubscriptionSource {
  readonly server: string;
  readonly maxMessageBytes: number;
  /** Routes the messages of one JSON text or SSE event (bad ones are reported, not thrown); true when one answered `requestId`. */
  deliverSafely(text: string, requestId?: RequestId): boolean;
  redact(text: string): string;
}

/** A stream whose answer already arrived whole (a JSON body, a JSON-RPC error in a 4xx body): it has ended. */
const ENDED: SubscriptionStream = { read: () => Promise.resolve(), cancel: () => {} };

export async function openSubscriptionStream(
  source: SubscriptionSource,
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  message: JsonRpcRequest,
  headersTimeoutMs: number,
  /** A typed refusal for this status (401/403 challenges). */
  refusal: (statusCode: number, headers: Dispatcher.ResponseData['headers']) => Error | undefined,
): Promise<SubscriptionStream> {
  const encoded = encodeMessage(message, source.server);
  if (typeof encoded !== 'string') throw encoded;
  let response: Dispatcher.ResponseData;
  try {
    // bodyTimeout 0: a quiet listen is not a dead one (the server's keepalive comments are optional).
    response = await pool.request({
      path,
      method: 'POST',
      headers,
      body: encoded,
      headersTimeout: headersTimeoutMs,
      bodyTimeout: 0,
    });
  } catch (error) {
    throw exchangeError("POST 'subscriptions/listen'", error, source.server);
  }
  const { statusCode, body } = response;
  const type = mediaTypeEssence(response.headers['content-type']);
  if (statusCode >= 200 && statusCode < 300 && type === 'text/event-stream') {
    return {
      read: () =>
        readSseStream(
          body,
          { onEvent: (data) => source.deliverSafely(data), onEventId: () => {}, onRetry: () => {} },
          source.maxMessageBytes,
          source.server,
        ),
      cancel: () => discardBody(body),
    };
  }
  const refused = statusCode >= 400 ? refusal(statusCode, response.headers) : undefined;
  if (refused) {
    discardBody(body);
    throw refused;
  }
  // Backpressure: the listener waits out its Retry-After (runtime/session/handshake-busy.ts).
  if (isBusyStatus(statusCode)) {
    discardBody(body);
    throw busyError(statusCode, response.headers, message, undefined, source.server);
  }
  // A JSON answer (an error such as "Subscription limit reached", or a 4xx carrying a JSON-RPC
  // error as the modern wire does): delivered, so the listen settles with it.
  let text = '';
  try {
    text = await readBodyBounded(body, undefined, ERROR_BODY_LIMIT, source.server);
  } catch {
    // described by its status alone
  }
  if ((type === 'application/json' || statusCode >= 400) && text && source.deliverSafely(text, message.id))
    return ENDED;
  if (statusCode >= 200 && statusCode < 300) {
    throw new ProtocolError(
      `unexpected content type ${JSON.stringify(headerValue(response.headers['content-type']) ?? '')} for 'subscriptions/listen' (expected text/event-stream)`,
      { server: source.server },
    );
  }
  throw statusError(statusCode, message, text ? source.redact(text).slice(0, 200) : undefined, source.server);
}

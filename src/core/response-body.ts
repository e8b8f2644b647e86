/** Reading (or abandoning) an HTTP response body: bounded, and never an unhandled error. */
import { errors, type Client, type Dispatcher } from 'undici';
import { excerpt } from './excerpt.js';
import { headerValue, type HeaderValue } from './headers.js';
import { McpSupervisorError, ProtocolError, TransportError } from './errors.js';

export type Body = Dispatcher.ResponseData['body'];

/**
 * Abandons a body nobody reads. undici's body emits an AbortError when it is destroyed unread;
 * with no listener that is an uncaught exception. Destroyed with one shared RequestAbortedError
 * whose stack is already written: undici made a new one per body, and Node formats the stack of
 * each error a stream is destroyed with (a `stop()` of 10,000 servers discards 10,000 GET streams).
 */
export function discardBody(body: Body): void {
  body.on('error', ignoreError).destroy(DISCARDED);
}

/**
 * Closes a long-lived stream's own client at once (transports/pool.ts `streamClient`): its socket
 * is destroyed and its request fails, like a discarded body, with one shared error; `body`, when
 * the stream is open, gets a listener for it.
 */
export function closeStreamClient(client: Client, body?: Body): void {
  body?.on('error', ignoreError);
  client.destroy(CLIENT_CLOSED).catch(ignoreError);
}

/** An error thrown many times over: its stack is formatted once, here, not by Node at each throw. */
function shared<E extends Error>(error: E): E {
  void error.stack;
  return error;
}

const DISCARDED: Error = shared(new errors.RequestAbortedError());
const CLIENT_CLOSED: Error = shared(new errors.ClientDestroyedError());

function ignoreError(): void {}

/**
 * Reads a whole body as UTF-8, refusing more than `max` bytes. Every failure is typed: a body cut
 * short (undici's SocketError "other side closed") is a TransportError, a body released at its
 * request's deadline rejects with the error the caller already got.
 */
export function readBodyBounded(body: Body, contentLength: HeaderValue, max: number, server?: string): Promise<string> {
  const declared = Number(headerValue(contentLength));
  if (Number.isFinite(declared) && declared >= 0) {
    if (declared > max) {
      discardBody(body);
      return Promise.reject(
        new ProtocolError(`response body of ${declared} bytes exceeds maxMessageBytes (${max})`, { server }),
      );
    }
    // No async frame of its own: every JSON answer on the hot path comes through here.
    return body.text().catch((error: unknown) => {
      throw exchangeError('reading the response body', error, server);
    });
  }
  return readChunked(body, max, server);
}

async function readChunked(body: Body, max: number, server: string | undefined): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > max) {
        body.destroy();
        throw new ProtocolError(`response body exceeds maxMessageBytes (${max})`, { server });
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw exchangeError('reading the response body', error, server);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * A short description of an error body: the JSON-RPC error message when there is one. Secrets
 * are redacted before the text is cut short: a cut through a secret would let part of it out.
 */
export async function describeErrorBody(body: Body, redact: (text: string) => string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readBodyBounded(body, undefined, 8 * 1024);
  } catch {
    return undefined;
  }
  return describeErrorText(text, redact);
}

/** An error body already read (transports/json-answer.ts reads a small refusal whole): its message, or an excerpt. */
export function describeErrorText(text: string, redact: (text: string) => string): string | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed?.error?.message === 'string') return excerpt(redact(parsed.error.message), 200);
  } catch {
    // not JSON: fall through to the raw excerpt
  }
  return excerpt(redact(text), 200);
}

/**
 * `error` as a typed error of the exchange `what` (e.g. `POST 'tools/call'`): ours pass through.
 *
 * What an HTTP exchange that failed says to the caller: always one of the typed errors. undici
 * rejects with its own classes (SocketError "other side closed" when a body is cut short of its
 * Content-Length, BodyTimeoutError, …); a request released at its deadline rejects with the
 * typed error its caller already got, which passes through unchanged.
 */
export function exchangeError(what: string, error: unknown, server: string | undefined): McpSupervisorError {
  if (error instanceof McpSupervisorError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const reason =
    code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
      ? 'timed out'
      : typeof code === 'string'
        ? `${code}${error instanceof Error && error.message ? ` (${error.message})` : ''}`
        : error instanceof Error
          ? error.message
          : String(error);
  return new TransportError(`${what} failed: ${reason}`, undefined, { server, cause: error });
}

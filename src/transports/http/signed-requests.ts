/**
 * The Streamable HTTP exchanges signed per request: every POST, GET and DELETE carries a fresh
 * DPoP proof when the credentials use one (RFC 9449 §7), and is sent once more when the server
 * answers with a nonce to put in the proof (RFC 9449 §9). With bearer tokens, signing is a no-op.
 */
import type { Dispatcher, Pool } from 'undici';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { ExchangeSignal } from '../../protocol/pending.js';
import type { HttpCredentials } from '../http-credentials.js';
import { openEventStream, postForAnswer, type EventStreamResult, type PostOptions } from '../http-requests.js';
import type { PostAnswer } from '../json-answer.js';
import { sharedDeadline } from './shared-deadline.js';
import { sendDelete } from './session-delete.js';

/** Where the signed requests go, and what signs them. */
export interface SignedEndpoint {
  readonly credentials: HttpCredentials;
  /** The MCP endpoint: what DPoP proofs name (`htu`). */
  readonly url: URL;
  readonly path: string;
  readonly server: string;
}

/** The headers for one attempt: built again for the retry (the credentials may have changed). */
type HeadersFor = () => Record<string, string>;

/**
 * POSTs `message`, once more when a DPoP server asks for a proof with its nonce. Unsigned (no
 * DPoP, the usual case): one POST straight to undici, no retry loop and no async frame.
 */
export function postSigned(
  endpoint: SignedEndpoint,
  pool: Pool,
  headersFor: HeadersFor,
  message: JsonRpcMessage,
  options: PostOptions,
): Promise<PostAnswer> {
  const { credentials, url, path, server } = endpoint;
  if (!credentials.signs) return postForAnswer(pool, path, headersFor(), message, options, server);
  return (async () => {
    for (let retried = false; ; retried = true) {
      const signed = credentials.sign('POST', url, headersFor());
      const headers = signed instanceof Promise ? await signed : signed;
      const response = await postForAnswer(pool, path, headers, message, options, server);
      if (!credentials.nonceRequested(response.statusCode, response.headers, url) || retried) return response;
      await response.body?.dump().catch(() => {});
    }
  })();
}

/** GETs the session's event stream; resolves once the response headers are in. */
export async function getStreamSigned(
  endpoint: SignedEndpoint,
  pool: Dispatcher,
  headersFor: HeadersFor,
  request: { signal: ExchangeSignal | undefined; headersTimeout: number; bodyTimeout: number },
  redact: (text: string) => string,
  unavailable: ReadonlySet<number>,
): Promise<EventStreamResult> {
  const { credentials, url, path, server } = endpoint;
  for (let retried = false; ; retried = true) {
    const generation = credentials.current;
    let nonceRequested = false;
    const signed = credentials.sign('GET', url, headersFor());
    try {
      return await openEventStream(
        pool,
        { path, headers: signed instanceof Promise ? await signed : signed, ...request },
        'the GET stream',
        redact,
        server,
        unavailable,
        (statusCode, headers) => {
          nonceRequested = credentials.nonceRequested(statusCode, headers, url);
          return credentials.refusal(statusCode, headers, 'the GET stream', generation);
        },
      );
    } catch (error) {
      // Refused for a DPoP nonce, or for credentials replaced while it was on its way: once more at once.
      if (retried || !(nonceRequested || credentials.outdated(error))) throw error;
    }
  }
}

/** DELETEs the session; its answer is read and dropped (the caller ends the session whatever it says). */
export async function deleteSigned(
  endpoint: SignedEndpoint,
  pool: Pool,
  headersFor: HeadersFor,
  timeoutMs: number,
): Promise<void> {
  const { credentials, url, path } = endpoint;
  if (!credentials.signs) return sendDelete(pool, path, headersFor(), timeoutMs);
  for (let retried = false; ; retried = true) {
    const signed = credentials.sign('DELETE', url, headersFor());
    const { statusCode, headers, body } = await pool.request({
      path,
      method: 'DELETE',
      headers: signed instanceof Promise ? await signed : signed,
      signal: sharedDeadline(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    // 2xx, 404 (already gone) and 405 (server does not support DELETE) all end the session for us.
    await body.dump().catch(() => {});
    if (retried || !credentials.nonceRequested(statusCode, headers, url)) return;
  }
}

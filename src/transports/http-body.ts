/**
 * Small helpers shared by the HTTP transports: bounded reads, media-type essence, network error
 * mapping, header normalisation and redaction of secrets in error text.
 */
import type { Dispatcher, Pool } from 'undici';
import { excerpt, type JsonRpcMessage } from '../protocol/jsonrpc.js';
import { ProtocolError, TransportError } from '../protocol/errors.js';

type Body = Dispatcher.ResponseData['body'];

/** `text/event-stream; charset=utf-8` -> `text/event-stream`. */
export function mediaTypeEssence(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return '';
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

export function headerValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

/**
 * Abandons a body nobody reads. undici's body emits an AbortError when it is destroyed unread;
 * with no listener that is an uncaught exception.
 */
export function discardBody(body: Body): void {
  body.on('error', ignoreError).destroy();
}

function ignoreError(): void {}

/** Reads a whole body as UTF-8, refusing more than `max` bytes. */
export async function readBodyBounded(body: Body, contentLength: string | string[] | undefined, max: number, server?: string): Promise<string> {
  const declared = Number(headerValue(contentLength));
  if (Number.isFinite(declared) && declared >= 0) {
    if (declared > max) {
      discardBody(body);
      throw new ProtocolError(`response body of ${declared} bytes exceeds maxMessageBytes (${max})`, { server });
    }
    return body.text();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > max) {
      body.destroy();
      throw new ProtocolError(`response body exceeds maxMessageBytes (${max})`, { server });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/** A short description of an error body: the JSON-RPC error message when there is one. */
export async function describeErrorBody(body: Body): Promise<string | undefined> {
  let text: string;
  try {
    text = await readBodyBounded(body, undefined, 8 * 1024);
  } catch {
    return undefined;
  }
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed?.error?.message === 'string') return excerpt(parsed.error.message, 200);
  } catch {
    // not JSON: fall through to the raw excerpt
  }
  return excerpt(text, 200);
}

export function isAbortError(error: unknown): boolean {
  const e = error as { name?: string; code?: string } | null;
  return e?.name === 'AbortError' || e?.code === 'UND_ERR_ABORTED' || e?.code === 'ABORT_ERR';
}

/** Turns an undici failure into a TransportError without a status. */
export function networkError(what: string, error: unknown, server?: string): TransportError {
  const code = (error as { code?: string } | null)?.code;
  const reason = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' ? 'timed out' : code ?? (error instanceof Error ? error.message : String(error));
  return new TransportError(`${what} failed: ${reason}`, undefined, { server, cause: error });
}

/** Header names lower-cased, so user headers can be merged with ours without duplicates. */
export function lowercaseHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** The values of credential-bearing headers (with and without their scheme), for redaction. */
export function secretHeaderValues(headers: Record<string, string>): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'authorization' || name === 'proxy-authorization' || name === 'cookie' || name.includes('token') || name.includes('key')) {
      values.push(value, value.replace(/^\S+\s+/, ''));
    }
  }
  return values;
}

/** Servers sometimes echo a session id or a token in error text; none of it may reach an error. */
export function redactSecrets(text: string | undefined, secrets: readonly (string | undefined)[]): string | undefined {
  if (text === undefined) return undefined;
  let result = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) result = result.split(secret).join('[redacted]');
  }
  return result;
}

/** `'tools/call'` or `a response`, for error messages. */
export function describeMessage(message: JsonRpcMessage): string {
  return 'method' in message ? `'${message.method}'` : 'a response';
}

/** POSTs one JSON-RPC message, bounded by `timeoutMs`; network failures become TransportErrors. */
export async function postMessage(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  message: JsonRpcMessage,
  options: { signal?: AbortSignal | undefined; timeoutMs: number },
  server: string,
): Promise<Dispatcher.ResponseData> {
  try {
    return await pool.request({
      path,
      method: 'POST',
      headers,
      body: JSON.stringify(message),
      signal: options.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  } catch (error) {
    if (isAbortError(error)) throw error;
    throw networkError(`POST ${describeMessage(message)}`, error, server);
  }
}

/** A non-2xx answer to a message, with the (already redacted) detail from its body. */
export function statusError(statusCode: number, message: JsonRpcMessage, detail: string | undefined, server: string): TransportError {
  return new TransportError(`HTTP ${statusCode} for ${describeMessage(message)}${detail ? `: ${detail}` : ''}`, statusCode, { server, body: detail });
}

export type EventStreamResult = { kind: 'open'; body: Body } | { kind: 'unavailable'; status: number };

/**
 * GETs a `text/event-stream` and checks its answer: statuses in `unavailable` mean "no stream
 * here", other non-2xx statuses and other content types are typed errors naming `what`.
 */
export async function openEventStream(
  pool: Pool,
  request: { path: string; headers: Record<string, string>; signal?: AbortSignal | undefined; headersTimeout: number; bodyTimeout: number },
  what: string,
  redact: (text: string | undefined) => string | undefined,
  server: string,
  unavailable: ReadonlySet<number> = NO_STATUSES,
  /** A typed refusal for this status (401/403 challenges), thrown instead of the generic error. */
  refusal?: (statusCode: number, headers: Dispatcher.ResponseData['headers']) => Error | undefined,
): Promise<EventStreamResult> {
  let response: Dispatcher.ResponseData;
  try {
    response = await pool.request({ ...request, method: 'GET' });
  } catch (error) {
    if (isAbortError(error)) throw error;
    throw networkError(`GET ${what}`, error, server);
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
    const detail = redact(await describeErrorBody(body));
    throw new TransportError(`HTTP ${statusCode} for ${what}${detail ? `: ${detail}` : ''}`, statusCode, { server, body: detail });
  }
  if (mediaTypeEssence(headers['content-type']) !== 'text/event-stream') {
    await body.dump().catch(() => {});
    throw new ProtocolError(`${what} answered ${JSON.stringify(headerValue(headers['content-type']) ?? '')}, not text/event-stream`, { server });
  }
  return { kind: 'open', body };
}

const NO_STATUSES: ReadonlySet<number> = new Set();

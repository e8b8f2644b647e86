/**
 * The one way the OAuth client talks HTTP: undici `request` without redirects (a redirect is a
 * failure, so credentials never follow one to another origin), a timeout per call, bounded
 * bodies, and errors that name the step and the URL (without its query) but no secret.
 */
import { request } from 'undici';
import { AuthorizationError, describeError } from '../core/errors.js';
import { isAbortError, McpSupervisorError } from '../core/errors.js';
import { readBodyBounded } from '../core/response-body.js';
import type { DpopSigner } from './dpop.js';

/** Metadata documents and token responses are small; anything bigger is refused. */
const MAX_BODY_BYTES = 256 * 1024;

export interface HttpContext {
  server: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Token requests carry a DPoP proof signed with this (RFC 9449 §5); undefined: plain bearer tokens. */
  dpop?: DpopSigner | undefined;
}

export interface HttpAnswer {
  status: number;
  text: string;
  contentType: string;
  /** Response headers, names lower-cased (e.g. `dpop-nonce`). */
  headers: Record<string, string | string[] | undefined>;
}

export interface HttpCall {
  /** What this call is for, e.g. 'protected resource metadata'; starts every error message. */
  what: string;
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  body?: string;
}

/** The URL for messages: origin and path only, since queries may carry state or codes. */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export async function httpCall(call: HttpCall, ctx: HttpContext): Promise<HttpAnswer> {
  const where = `${call.method} ${describeUrl(call.url)}`;
  try {
    const response = await request(call.url, {
      method: call.method,
      headers: { accept: 'application/json', ...call.headers },
      body: call.body,
      signal: ctx.signal,
      headersTimeout: ctx.timeoutMs,
      bodyTimeout: ctx.timeoutMs,
    });
    const contentType = String(response.headers['content-type'] ?? '');
    const text = await readBodyBounded(response.body, response.headers['content-length'], MAX_BODY_BYTES, ctx.server);
    return { status: response.statusCode, text, contentType, headers: response.headers };
  } catch (error) {
    if (isAbortError(error) || ctx.signal?.aborted) throw ctx.signal?.reason ?? error;
    // The bounded body read already says what failed (a typed error): its message, not its code.
    const code = error instanceof McpSupervisorError ? undefined : (error as { code?: string } | null)?.code;
    const reason =
      code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
        ? `timed out after ${ctx.timeoutMs} ms`
        : (code ?? describeError(error));
    // Network trouble may pass: not fatal, worth retrying.
    throw new AuthorizationError(`${call.what}: ${where} failed: ${reason}`, {
      server: ctx.server,
      fatal: false,
      retryable: true,
      cause: error,
    });
  }
}

/** Parses a JSON object body; a non-object or unparsable body is an error naming the step. */
export function parseJsonObject(answer: HttpAnswer, call: HttpCall, ctx: HttpContext): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(answer.text);
  } catch {
    throw new AuthorizationError(
      `${call.what}: ${call.method} ${describeUrl(call.url)} answered HTTP ${answer.status} with a body that is not JSON`,
      { server: ctx.server },
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AuthorizationError(
      `${call.what}: ${call.method} ${describeUrl(call.url)} answered HTTP ${answer.status} with JSON that is not an object`,
      { server: ctx.server },
    );
  }
  return value as Record<string, unknown>;
}

/** `application/x-www-form-urlencoded` encoding, as OAuth requests and Basic credentials use it. */
export function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

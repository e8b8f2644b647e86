/**
 * What the body of a refused POST (a 4xx) says. The modern (2026-07-28) wire answers a refused
 * request with a JSON-RPC error there, which settles the request; a legacy `initialize` refused with
 * -32022 comes from a modern-only server.
 */
import type { Dispatcher } from 'undici';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import { SessionExpiredError, VersionRefusedError, type AuthorizationRequiredError } from '../../core/errors.js';
import { UNSUPPORTED_PROTOCOL_VERSION } from '../../protocol/era.js';
import { busyError, describeMessage, isBusyStatus, statusError } from '../http-requests.js';
import { describeErrorBody, describeErrorText, readBodyBounded } from '../../core/response-body.js';
import { REFUSAL_BODY_LIMIT, type RefusedJsonAnswer } from '../json-answer.js';
import type { TransportSink } from '../transport.js';

/** A refused POST's answer: its body to read, or its small JSON body read whole already. */
export type Refused = Dispatcher.ResponseData | RefusedJsonAnswer;

/** The body's text, at most REFUSAL_BODY_LIMIT bytes; empty when it could not be read. */
async function textOf(answer: Refused, server: string): Promise<string> {
  if (answer.body === undefined) return answer.text;
  try {
    return await readBodyBounded(answer.body, undefined, REFUSAL_BODY_LIMIT, server);
  } catch {
    return ''; // an unreadable body is described by its status alone
  }
}

function describeRefusal(
  answer: Refused,
  redact: (text: string) => string,
): Promise<string | undefined> | string | undefined {
  return answer.body === undefined ? describeErrorText(answer.text, redact) : describeErrorBody(answer.body, redact);
}

/** What reading a refusal needs from its transport. */
export interface RefusalReader {
  readonly server: string;
  readonly sink: Pick<TransportSink, 'onMessage'>;
  /** The modern (2026-07-28) wire: a refused request's body holds its JSON-RPC error. */
  readonly isModern: boolean;
  redact(text: string): string;
  /** The credentials' verdict on a refusal (401/403 with the credentials of `generation`), if it is theirs. */
  credentialRefusal(
    statusCode: number,
    headers: Refused['headers'],
    what: string,
    generation: number,
  ): AuthorizationRequiredError | undefined;
}

/**
 * A POST answered outside 2xx: the typed error it rejects with (a refusal of the credentials,
 * backpressure, an expired session, a status error), or, on the modern wire, the JSON-RPC error
 * in its body settling the request.
 */
export async function refusedPost(
  reader: RefusalReader,
  answer: Refused,
  message: JsonRpcMessage,
  sent: {
    /** The credentials' generation the POST was signed with. */
    credentials: number;
    handshake: boolean | undefined;
    /** The session the POST carried (its generation), if any: a 404 on one means it expired. */
    carriedSession: boolean;
    generation: number;
  },
): Promise<void> {
  const { statusCode, headers, body } = answer;
  const refusal = reader.credentialRefusal(statusCode, headers, describeMessage(message), sent.credentials);
  if (refusal) {
    await body?.dump().catch(() => {});
    throw refusal;
  }
  const redact = (text: string) => reader.redact(text);
  // Backpressure, whatever the era: the request was not processed; the request path holds it (requests/request-limits.ts).
  if (isBusyStatus(statusCode))
    throw busyError(statusCode, headers, message, await describeRefusal(answer, redact), reader.server);
  if (reader.isModern) return settleRefusal(reader, answer, message);
  if (sent.handshake) await refuseModernOnly(reader, answer, message);
  const detail = await describeRefusal(answer, redact);
  if (statusCode === 404 && sent.carriedSession) {
    throw new SessionExpiredError(
      `session expired: the server answered 404 to ${describeMessage(message)}`,
      sent.generation,
      { server: reader.server },
    );
  }
  throw statusError(statusCode, message, detail, reader.server, sent.carriedSession ? sent.generation : undefined);
}

/** The `error` of a JSON-RPC error response in `text`, if that is what it holds. */
function jsonRpcErrorIn(text: string): { code: number; message: string; data?: unknown } | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    const error = parsed?.error;
    if (typeof error?.code !== 'number') return undefined;
    const message = typeof error.message === 'string' ? error.message : '';
    return error.data === undefined ? { code: error.code, message } : { code: error.code, message, data: error.data };
  } catch {
    return undefined;
  }
}

/**
 * A modern server answers a refused request with a JSON-RPC error in the 4xx body (404 -32601,
 * 400 -32022 …): that error settles the request, as if it came with a 200.
 */
async function settleRefusal(reader: RefusalReader, answer: Refused, message: JsonRpcMessage): Promise<void> {
  const requestId = 'method' in message && 'id' in message ? message.id : undefined;
  const text = answer.body === undefined ? answer.text : await textOf(answer, reader.server);
  const error = requestId === undefined ? undefined : jsonRpcErrorIn(text);
  if (error !== undefined && requestId !== undefined) {
    reader.sink.onMessage({ jsonrpc: '2.0', id: requestId, error });
    return;
  }
  const detail = text ? reader.redact(text).slice(0, 200) : undefined;
  throw statusError(answer.statusCode, message, detail, reader.server);
}

/**
 * An `initialize` refused with -32022 comes from a modern-only server: say so (fatal) instead of
 * trying legacy SSE. Any other refusal goes on as a status error, the body read into its detail.
 */
async function refuseModernOnly(reader: RefusalReader, answer: Refused, message: JsonRpcMessage): Promise<never> {
  const text = await textOf(answer, reader.server);
  const error = jsonRpcErrorIn(text);
  if (error?.code === UNSUPPORTED_PROTOCOL_VERSION) {
    const supported = (error.data as { supported?: unknown } | undefined)?.supported;
    const requested = 'method' in message ? message.params?.protocolVersion : undefined;
    throw new VersionRefusedError(String(requested), Array.isArray(supported) ? supported.map(String) : [], {
      server: reader.server,
      hint: "it speaks only the modern era (set protocolVersion to 'auto' or 'modern')",
    });
  }
  const detail = error?.message ?? (text ? text : undefined);
  throw statusError(
    answer.statusCode,
    message,
    detail === undefined ? undefined : reader.redact(detail).slice(0, 200),
    reader.server,
  );
}

/**
 * The JSON-RPC the application's client and the transport exchange, and the few translations
 * between it and the supervised connection: a failure as a JSON-RPC error, the client's
 * capabilities as handlers, the supervised handshake as the answer to the client's `initialize`.
 * Imports no SDK: the types are structural, wide enough for every client's messages.
 */
import { isObject } from '../../core/is-object.js';
import { isMcpSupervisorError, McpError, type ClientHandlers, type Handler, type Progress } from '../../index.js';
import type { ServerHandshake } from '../../handle/handshake.js';
import { describeError } from '../../core/errors.js';

export type MessageId = string | number;

/** Any JSON-RPC message: a request, a notification, a result or an error. */
export interface WireMessage {
  jsonrpc: '2.0';
  id?: MessageId | null | undefined;
  method?: string | undefined;
  params?: unknown;
  result?: unknown;
  error?: WireError | undefined;
}

export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/** JSON-RPC's "method not found"; the answer to a `server/discover` probe (we answer as a 2025-era server). */
export const METHOD_NOT_FOUND = -32601;
/**
 * The code of every failure that is the connection's, not the server's (outcome unknown, timeout,
 * connection closed, …); `data.code` names it (`'OUTCOME_UNKNOWN'`, `'REQUEST_TIMEOUT'`, …).
 */
export const SUPERVISOR_ERROR = -32000;

/** A failure of `handle.request()` as the JSON-RPC error the client turns into its own error. */
export function errorOf(error: unknown): WireError {
  if (error instanceof McpError)
    return error.data === undefined
      ? { code: error.rpcCode, message: error.rpcMessage }
      : { code: error.rpcCode, message: error.rpcMessage, data: error.data };
  if (isMcpSupervisorError(error))
    return { code: SUPERVISOR_ERROR, message: error.message, data: { code: error.code, retryable: error.retryable } };
  return { code: SUPERVISOR_ERROR, message: describeError(error) };
}

/** A JSON-RPC error the client sent back, as the error a handler throws. */
export function errorFrom(error: WireError): McpError {
  return new McpError(error.code, error.message, error.data);
}

/** The request's params without the client's `progressToken` (the connection puts its own), and that token. */
export function splitProgress(params: unknown): {
  params: Record<string, unknown> | undefined;
  progressToken: string | number | undefined;
} {
  if (!isObject(params)) return { params: undefined, progressToken: undefined };
  const meta = params._meta;
  if (!isObject(meta) || meta.progressToken === undefined) return { params, progressToken: undefined };
  const { progressToken, ...restMeta } = meta;
  const { _meta: _dropped, ...rest } = params;
  const stripped = Object.keys(restMeta).length > 0 ? { ...rest, _meta: restMeta } : rest;
  return { params: stripped, progressToken: progressToken as string | number };
}

/** The client's progress notification for its own token. */
export function progressOf(token: string | number, progress: Progress): WireMessage {
  const params: Record<string, unknown> = { progressToken: token, progress: progress.progress };
  if (progress.total !== undefined) params.total = progress.total;
  if (progress.message !== undefined) params.message = progress.message;
  return { jsonrpc: '2.0', method: 'notifications/progress', params };
}

/** Asks the application's client a server-to-client request and resolves with its answer. */
export type Ask = (
  method: string,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/**
 * The handlers the supervised connection advertises: exactly the client's declared
 * `roots`, `sampling` and `elicitation` (form, and URL when `elicitation.url` is declared). Each
 * one asks the client, whose own handler answers.
 */
export function handlersFor(capabilities: unknown, ask: Ask): ClientHandlers {
  const declared = isObject(capabilities) ? capabilities : {};
  const forward =
    (method: string): Handler =>
    (params, context) =>
      ask(method, params, context.signal);
  const handlers: ClientHandlers = {};
  if (declared.roots !== undefined) handlers.roots = forward('roots/list');
  if (declared.sampling !== undefined) handlers.sampling = forward('sampling/createMessage');
  if (isObject(declared.elicitation)) {
    const elicitation = declared.elicitation;
    // A client that names no mode supports the form mode (spec 2025-11-25).
    if (elicitation.form !== undefined || elicitation.url === undefined)
      handlers.elicitation = forward('elicitation/create');
    if (elicitation.url !== undefined) handlers.urlElicitation = forward('elicitation/create');
  }
  return handlers;
}

/** What the client declared that the supervised connection's options carry (`sampling.tools`, `sampling.context`). */
export function samplingOptionsFor(capabilities: unknown): { tools?: boolean; context?: boolean } {
  const sampling = isObject(capabilities) && isObject(capabilities.sampling) ? capabilities.sampling : {};
  return { tools: sampling.tools !== undefined, context: sampling.context !== undefined };
}

/**
 * The answer to the client's `initialize`, from the supervised handshake. The client is always
 * answered as by a 2025-era server: its own era negotiation is the connection's job. The version
 * is the server's when the client knows it, else the one the client asked for (the connection
 * speaks the server's).
 */
export function initializeResult(
  handshake: ServerHandshake,
  requested: unknown,
  supported: readonly string[] | undefined,
): Record<string, unknown> {
  const asked = typeof requested === 'string' ? requested : handshake.protocolVersion;
  const server = handshake.protocolVersion;
  const known = supported ? supported.includes(server) : server <= asked;
  const protocolVersion = handshake.era === 'legacy' && known && server <= asked ? server : asked;
  const result: Record<string, unknown> = {
    protocolVersion,
    capabilities: handshake.capabilities,
    serverInfo: handshake.serverInfo,
  };
  if (handshake.instructions !== undefined) result.instructions = handshake.instructions;
  return result;
}

/** The `_meta` keys a 2026-07-28 client puts on every request; the connection puts its own (or none, to a 2025-era server). */
const ENVELOPE_KEYS = [
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientCapabilities',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/logLevel',
];

/**
 * What a client that speaks 2026-07-28 says of itself on each request (it sends no `initialize`):
 * its info and capabilities from `_meta`, in the shape of the `initialize` params.
 */
export function askedInEnvelope(params: unknown): Record<string, unknown> {
  const meta = isObject(params) && isObject(params._meta) ? params._meta : {};
  return {
    clientInfo: meta['io.modelcontextprotocol/clientInfo'],
    capabilities: meta['io.modelcontextprotocol/clientCapabilities'],
  };
}

/** The request's params without the client's 2026-07-28 envelope (the connection carries its own). */
export function withoutEnvelope(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta;
  if (!isObject(meta) || !ENVELOPE_KEYS.some((key) => key in meta)) return params;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) if (!ENVELOPE_KEYS.includes(key)) rest[key] = value;
  const { _meta: _dropped, ...others } = params!;
  return Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others;
}

/**
 * JSON-RPC 2.0 framing. Envelopes are checked cheaply by shape (no schema library on the hot
 * path); results are handed to the caller as-is and validated lazily where it matters.
 */
import { ProtocolError, describeError } from '../core/errors.js';
import { excerpt } from '../core/excerpt.js';

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown> | undefined;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | undefined;
}

interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

interface JsonRpcResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: unknown;
}

interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message && message.id !== undefined && message.id !== null;
}

export function isResponse(message: JsonRpcMessage): message is JsonRpcResponse {
  return !('method' in message) && ('result' in message || 'error' in message);
}

function isEnvelope(value: unknown): value is JsonRpcMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  if (v.jsonrpc !== '2.0') return false;
  if (typeof v.method === 'string') return true;
  if ('result' in v) return typeof v.id === 'string' || typeof v.id === 'number';
  if ('error' in v) {
    const e = v.error as Record<string, unknown> | null;
    return typeof e === 'object' && e !== null && typeof e.code === 'number' && typeof e.message === 'string';
  }
  return false;
}

/**
 * Parses one body or SSE `data` field into messages. A JSON array (batches, allowed by
 * 2025-03-26 servers) yields each element. Malformed input throws a ProtocolError that
 * quotes a short excerpt, never the whole body.
 */
export function parseMessages(text: string, server?: string): JsonRpcMessage[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ProtocolError(`malformed JSON from server: ${excerpt(text)}`, { server, cause });
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      // Quote the text, never the parsed item: re-encoding a 100,000-deep array overflows the stack.
      if (!isEnvelope(value[i]))
        throw new ProtocolError(`item ${i} of a batch is not a JSON-RPC message: ${excerpt(text)}`, { server });
    }
    return value as JsonRpcMessage[];
  }
  if (!isEnvelope(value)) throw new ProtocolError(`not a JSON-RPC message: ${excerpt(text)}`, { server });
  return [value];
}

/**
 * A message as its JSON text. Params that JSON cannot encode (a BigInt, a cycle, nesting deeper
 * than the stack) are the caller's to fix: a ProtocolError naming the method (returned, for the
 * caller to reject with), never a TypeError.
 */
export function encodeMessage(message: JsonRpcMessage, server?: string): string | ProtocolError {
  try {
    return JSON.stringify(message);
  } catch (cause) {
    const what = 'method' in message ? `'${message.method}'` : 'a response';
    return new ProtocolError(`cannot send ${what}: its params cannot be encoded as JSON (${describeError(cause)})`, {
      server,
      cause,
    });
  }
}

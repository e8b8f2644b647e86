/**
 * JSON-RPC 2.0 framing. Envelopes are checked cheaply by shape (no schema library on the hot
 * path); results are handed to the caller as-is and validated lazily where it matters.
 */
import { ProtocolError } from './errors.js';

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

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message && message.id !== undefined && message.id !== null;
}

export function isNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return 'method' in message && !('id' in message && message.id !== undefined && message.id !== null);
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
    for (const item of value) {
      if (!isEnvelope(item)) throw new ProtocolError(`not a JSON-RPC message in batch: ${excerpt(JSON.stringify(item))}`, { server });
    }
    return value as JsonRpcMessage[];
  }
  if (!isEnvelope(value)) throw new ProtocolError(`not a JSON-RPC message: ${excerpt(text)}`, { server });
  return [value];
}

export function excerpt(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

// JSON-RPC on the wire for the HTTP fixture: messages, error objects, JSON answers, headers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isClosed } from '../sse-writer.js';

export type JsonRpcMessage = Record<string, any>;

export function rpcError(id: unknown, code: number, message: string): JsonRpcMessage {
  return { jsonrpc: '2.0', error: { code, message }, id: id ?? null };
}

/** A request header's first value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (isClosed(res)) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

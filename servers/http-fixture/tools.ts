// The HTTP fixture's tools: `echo`, `slow` (answers after `ms`) and `trickle` (never finishes).
import type { ServerResponse } from 'node:http';
import { isClosed, startSse } from '../sse-writer.js';
import { rpcError, type JsonRpcMessage } from './wire.js';

const ECHO_TOOL = {
  name: 'echo',
  description: 'Echo the given text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The answer to a request the fixture handles itself (ping, tools/list, tools/call). */
export async function computeResponse(msg: JsonRpcMessage): Promise<JsonRpcMessage> {
  const id = msg.id;
  const ok = (result: unknown): JsonRpcMessage => ({ jsonrpc: '2.0', id, result });
  const params = (msg.params ?? {}) as Record<string, any>;
  switch (msg.method) {
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({ tools: [ECHO_TOOL] });
    case 'tools/call': {
      const args = (params.arguments ?? {}) as Record<string, any>;
      if (params.name === 'echo') return ok({ content: [{ type: 'text', text: String(args.text ?? '') }] });
      if (params.name === 'slow') {
        const ms = Number(args.ms ?? 0);
        await sleep(ms);
        return ok({ content: [{ type: 'text', text: `slept ${ms}ms` }] });
      }
      return rpcError(id, -32602, `Unknown tool: ${String(params.name)}`);
    }
    default:
      return rpcError(id, -32601, `Method not found: ${String(msg.method)}`);
  }
}

export interface Trickle {
  /** Start a never-ending answer on `res`. */
  start(res: ServerResponse, everyMs: number): void;
  /** Answers still open (a slow server's abandoned exchanges). */
  open(): number;
}

/**
 * The `trickle` tool: a slow server. The headers at once, then one byte of the body every
 * `everyMs` (whitespace in JSON mode, an SSE comment line in SSE mode), never completing; stops
 * when the client lets the exchange go.
 */
export function createTrickle(responseMode: 'json' | 'sse'): Trickle {
  const trickling = new Set<ServerResponse>();
  return {
    start(res, everyMs) {
      if (responseMode === 'sse') startSse(res);
      else res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000000' }).flushHeaders();
      trickling.add(res);
      const timer = setInterval(() => {
        if (!isClosed(res)) res.write(responseMode === 'sse' ? ':\n' : ' ');
      }, everyMs);
      res.on('close', () => {
        clearInterval(timer);
        trickling.delete(res);
      });
    },
    open: () => trickling.size,
  };
}

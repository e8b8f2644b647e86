/**
 * SEP-2243 request headers of the modern Streamable HTTP wire: `Mcp-Method` on every request,
 * `Mcp-Name` for the requests that name a tool, prompt, resource or task, each value encoded as the
 * spec says (protocol/header-value.ts).
 */
import { encodeHeaderValue } from '../../protocol/tool-headers.js';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';

/**
 * Methods whose `params.name`, `params.uri` or `params.taskId` is mirrored into `Mcp-Name`. The
 * tasks extension (SEP-2663) routes by task id, so a load balancer can send a poll to the
 * instance holding the task.
 */
const NAMED_METHODS: Readonly<Record<string, 'name' | 'uri' | 'taskId'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * The finished headers of each method (and name) per shared POST headers object. The transport
 * builds a new shared object whenever the session, version or credentials change, so an entry
 * never outlives what it was built from; the hot path then allocates nothing. Bounded: task ids
 * and resource URIs are open-ended, and past the bound headers are built per request.
 */
const finished = new WeakMap<Record<string, string>, Map<string, Record<string, string>>>();
const MAX_FINISHED_PER_BASE = 256;

/**
 * The shared POST headers plus this message's `Mcp-Method` / `Mcp-Name` (and a call's
 * `Mcp-Param-*`). The result may be shared between requests: callers copy it, never change it.
 */
export function modernRequestHeaders(
  base: Record<string, string>,
  message: JsonRpcMessage,
  params?: Record<string, string>,
): Record<string, string> {
  if (!('method' in message)) return base;
  const field = NAMED_METHODS[message.method];
  const value = field === undefined ? undefined : message.params?.[field];
  const name = typeof value === 'string' ? value : undefined;
  if (params !== undefined && Object.keys(params).length > 0) return build(base, message.method, name, params);
  let byKey = finished.get(base);
  if (byKey === undefined) finished.set(base, (byKey = new Map<string, Record<string, string>>()));
  const key = name === undefined ? message.method : `${message.method} ${name}`;
  let headers = byKey.get(key);
  if (headers === undefined) {
    headers = build(base, message.method, name, undefined);
    if (byKey.size < MAX_FINISHED_PER_BASE) byKey.set(key, headers);
  }
  return headers;
}

function build(
  base: Record<string, string>,
  method: string,
  name: string | undefined,
  params: Record<string, string> | undefined,
): Record<string, string> {
  // Object.assign, not a spread with more properties: on Node 20 that object gets a hidden class
  // of its own (~0.3 KB held per connection with the cached headers).
  const headers: Record<string, string> = Object.assign({}, base, params);
  headers['mcp-method'] = method;
  if (name !== undefined) headers['mcp-name'] = encodeHeaderValue(name);
  return headers;
}

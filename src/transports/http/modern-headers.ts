/**
 * SEP-2243 request headers of the modern Streamable HTTP wire: `Mcp-Method` on every request,
 * `Mcp-Name` for the requests that name a tool, prompt, resource or task. A value that is not plain
 * header-safe ASCII (or looks like the sentinel itself) travels as `=?base64?…?=`.
 */
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

/** Visible ASCII and inner spaces/tabs; no leading or trailing whitespace. */
const PLAIN_HEADER_VALUE = /^(?:[\x21-\x7E](?:[\x20\x21-\x7E\t]*[\x21-\x7E])?)?$/;
const SENTINEL = /^=\?base64\?.*\?=$/;

/** A header value as the spec's Value Encoding says: as is, or the Base64 sentinel. */
export function encodeHeaderValue(value: string): string {
  if (value !== '' && PLAIN_HEADER_VALUE.test(value) && !SENTINEL.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The shared POST headers plus this message's `Mcp-Method` / `Mcp-Name` (and a call's `Mcp-Param-*`). */
export function modernRequestHeaders(
  base: Record<string, string>,
  message: JsonRpcMessage,
  params?: Record<string, string>,
): Record<string, string> {
  if (!('method' in message)) return base;
  const headers: Record<string, string> = { ...base, ...params, 'mcp-method': message.method };
  const field = NAMED_METHODS[message.method];
  const value = field === undefined ? undefined : message.params?.[field];
  if (typeof value === 'string') headers['mcp-name'] = encodeHeaderValue(value);
  return headers;
}

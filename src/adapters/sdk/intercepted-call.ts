/**
 * The client's `tools/call` through the call interceptors given to the transport
 * (tools/interceptors.ts): as `handle.callTool` would run them, but the server's answer goes
 * back to the client as it came (its own `Client` checks it).
 */
import type { CallToolResult, RequestOptions, ServerHandle } from '../../index.js';
import { isObject } from '../../core/is-object.js';
import { interceptToolCall, type ToolCallInterceptor } from '../../tools/interceptors.js';

export function interceptedToolCall(
  interceptors: readonly ToolCallInterceptor[],
  handle: ServerHandle,
  params: Record<string, unknown> | undefined,
  options: RequestOptions,
): Promise<unknown> {
  const tool = typeof params?.name === 'string' ? params.name : '';
  const args = isObject(params?.arguments) ? params.arguments : {};
  return interceptToolCall(interceptors, { server: handle.name, tool, arguments: args, options }, (call) =>
    handle.request<CallToolResult>(
      'tools/call',
      Object.assign({}, params, { name: call.tool, arguments: call.arguments }),
      call.options,
    ),
  );
}

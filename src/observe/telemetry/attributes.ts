/**
 * Attribute names and values, by the OpenTelemetry semantic conventions for MCP (gen-ai/mcp.md,
 * Development status) and, under `mcp_supervisor.*`, the runtime's own. Only low-cardinality,
 * secret-free values are derived here: the server's host and port (never the URL's path, query
 * or credentials), the method, a tool or prompt name, an error's class. Never a session id, a
 * token or a header value.
 */
import type { Attributes } from '@opentelemetry/api';
import type { ServerConfig } from '../../config/server-config.js';
import { McpError, McpSupervisorError } from '../../core/errors.js';

export const ATTR = {
  methodName: 'mcp.method.name',
  protocolVersion: 'mcp.protocol.version',
  requestId: 'jsonrpc.request.id',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operationName: 'gen_ai.operation.name',
  networkTransport: 'network.transport',
  protocolName: 'network.protocol.name',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  rpcStatusCode: 'rpc.response.status_code',
  // The runtime's own.
  server: 'mcp_supervisor.server.name',
  /** One principal's connection (docs/principals.md): its label, a hash unless `principals.expose`. */
  principal: 'mcp_supervisor.principal',
  transport: 'mcp_supervisor.transport',
  state: 'mcp_supervisor.state',
  fromState: 'mcp_supervisor.previous_state',
  cause: 'mcp_supervisor.cause',
  error: 'mcp_supervisor.error',
  attempt: 'mcp_supervisor.attempt',
  throttleReason: 'mcp_supervisor.throttle.reason',
} as const;

/** What a request is about: its tool or prompt (the span name's `{target}`), else nothing. */
export function targetOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  if (method !== 'tools/call' && method !== 'prompts/get') return undefined;
  const name = params?.name;
  return typeof name === 'string' ? name : undefined;
}

/** Where the server is, per `server.*` and `network.*`: the URL's host and port only; `pipe` for stdio. */
export function connectionAttributes(config: ServerConfig, transport: string | undefined): Attributes {
  const attributes = serverAttributes(config, transport);
  if (config.principal !== undefined) attributes[ATTR.principal] = config.principal;
  return attributes;
}

function serverAttributes(config: ServerConfig, transport: string | undefined): Attributes {
  if (config.kind === 'command') {
    return { [ATTR.server]: config.name, [ATTR.networkTransport]: 'pipe', [ATTR.transport]: 'stdio' };
  }
  const { url } = config;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return {
    [ATTR.server]: config.name,
    [ATTR.serverAddress]: url.hostname.replace(/^\[|\]$/g, ''),
    [ATTR.serverPort]: port,
    [ATTR.networkTransport]: 'tcp',
    [ATTR.protocolName]: 'http',
    [ATTR.transport]: transport ?? (config.type === 'auto' ? 'http' : config.type),
  };
}

/** The attributes one operation adds to its connection's: method, tool or prompt. */
export function operationAttributes(base: Attributes, method: string, target: string | undefined): Attributes {
  const attributes: Attributes = { ...base, [ATTR.methodName]: method };
  if (target !== undefined) {
    if (method === 'tools/call') {
      attributes[ATTR.toolName] = target;
      attributes[ATTR.operationName] = 'execute_tool';
    } else attributes[ATTR.promptName] = target;
  }
  return attributes;
}

export interface Failure {
  /** `error.type`: the JSON-RPC code, `tool_error`, the runtime's error code, or the error's class. */
  type: string;
  /** `rpc.response.status_code`: only for a JSON-RPC error answer. */
  rpcCode: string | undefined;
  message: string;
}

/** How an operation failed, in low-cardinality terms (see docs/telemetry.md for the list). */
export function failureOf(error: unknown): Failure {
  if (error instanceof McpError) {
    const code = String(error.rpcCode);
    return { type: code, rpcCode: code, message: error.rpcMessage };
  }
  if (error instanceof McpSupervisorError) return { type: error.code, rpcCode: undefined, message: error.message };
  if (error instanceof Error) return { type: error.name || '_OTHER', rpcCode: undefined, message: error.message };
  return { type: '_OTHER', rpcCode: undefined, message: String(error) };
}

/** A successful answer that reports a failure: a tool result with `isError` (per the conventions: `tool_error`). */
export function isToolError(method: string, result: unknown): boolean {
  return method === 'tools/call' && (result as { isError?: unknown } | null)?.isError === true;
}

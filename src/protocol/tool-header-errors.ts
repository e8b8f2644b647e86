/**
 * The two errors of SEP-2243 parameter mirroring: a tool the client left out of `tools/list`
 * because its `x-mcp-header` annotations break the spec (InvalidToolDefinitionError), and a
 * server's `-32020` HeaderMismatch (HeaderMismatchError, an McpError naming the header).
 */
import { McpError, ProtocolError, type ErrorDetails } from '../core/errors.js';
import { HEADER_MISMATCH } from './era.js';

/** The server's tool definition is invalid (spec 2026-07-28): the tool is excluded and cannot be called. */
export class InvalidToolDefinitionError extends ProtocolError {
  constructor(
    readonly tool: string,
    /** What is wrong with its definition, e.g. `x-mcp-header "Region" on property 'b' repeats "region"`. */
    readonly reason: string,
    details?: ErrorDetails,
  ) {
    super(`tool '${tool}' has an invalid definition and was excluded from tools/list: ${reason}`, details);
  }
}

/** `-32020` HeaderMismatch: the server says the HTTP headers and the body disagree (or a header is missing). */
export class HeaderMismatchError extends McpError {
  /** The header the server named (`Mcp-Param-Region`, `Mcp-Name`, …), when it named one. */
  readonly header: string | undefined;
  constructor(rpcMessage: string, data?: unknown, details?: ErrorDetails) {
    super(HEADER_MISMATCH, rpcMessage, data, details);
    this.header = headerNamed(rpcMessage, data);
  }
}

/** The header in `data.mismatch.header` (as the official SDK sends it), or the first one the message names. */
function headerNamed(message: string, data: unknown): string | undefined {
  const mismatch = (data as { mismatch?: { header?: unknown }; header?: unknown } | null | undefined) ?? undefined;
  const named = mismatch?.mismatch?.header ?? mismatch?.header;
  if (typeof named === 'string' && named.length > 0) return named;
  return /\b(Mcp-Param-[!#$%&'*+\-.^_`|~0-9A-Za-z]+|Mcp-Method|Mcp-Name|MCP-Protocol-Version)\b/i.exec(message)?.[1];
}

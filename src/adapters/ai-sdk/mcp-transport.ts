/**
 * The AI SDK's `MCPTransport` (`@ai-sdk/mcp`'s `createMCPClient({ transport })`) over a supervised
 * connection: the same transport as `mcp-supervisor/sdk`, whose shape the AI SDK's is a part of.
 */
import type { ServerConfigInput } from '../../index.js';
import { SupervisedTransport, type SupervisedTransportOptions } from '../sdk/supervised-transport.js';

/** A transport for `createMCPClient({ transport })`; `config` as for `connect()`. One per client. */
export function supervisedMcpTransport(
  config: ServerConfigInput,
  options?: SupervisedTransportOptions,
): SupervisedTransport {
  return new SupervisedTransport(config, options);
}

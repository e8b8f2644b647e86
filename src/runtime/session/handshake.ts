/**
 * The MCP handshake on a transport: `initialize`, the checks on its result (shape, a protocol
 * version this client speaks), then `notifications/initialized`. A version we do not speak ends
 * the session on the server before failing (fatal: a restart would negotiate the same).
 */
import type { SessionInfo } from '../../../machines/connection.machine.js';
import { ProtocolError, UnsupportedProtocolVersionError } from '../../core/errors.js';
import {
  InitializeResultSchema,
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientCapabilities,
  type Implementation,
} from '../../protocol/messages.js';
import type { Transport } from '../../transports/transport.js';

export interface HandshakeInput {
  server: string;
  transport: Transport;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
  /** A pinned legacy version to offer (default: the latest legacy version). */
  protocolVersion?: string | undefined;
  /** Sends the `initialize` request (through the runtime's pending requests) and resolves with its result. */
  initialize: (params: Record<string, unknown>) => Promise<unknown>;
}

export async function handshake({
  server,
  transport,
  capabilities,
  clientInfo,
  protocolVersion = LATEST_PROTOCOL_VERSION,
  initialize,
}: HandshakeInput): Promise<SessionInfo> {
  transport.beginSession();
  const parsed = InitializeResultSchema.safeParse(await initialize({ protocolVersion, capabilities, clientInfo }));
  if (!parsed.success) {
    throw new ProtocolError(
      `invalid initialize result: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
      { server },
    );
  }
  const result = parsed.data;
  if (!isSupportedProtocolVersion(result.protocolVersion)) {
    await transport.terminateSession();
    throw new UnsupportedProtocolVersionError(result.protocolVersion, SUPPORTED_PROTOCOL_VERSIONS, { server });
  }
  transport.completeSession(result.protocolVersion);
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    era: 'legacy',
    protocolVersion: result.protocolVersion,
    serverInfo: result.serverInfo,
    capabilities: result.capabilities,
    instructions: result.instructions,
    sessionGeneration: transport.sessionGeneration,
  };
}

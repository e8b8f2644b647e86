/**
 * What the current session's handshake told the client: the server's capabilities, identity,
 * instructions and protocol version. `status()` carries only the identity and version; a
 * drop-in transport (mcp-supervisor/sdk, mcp-supervisor/ai-sdk) must answer the application's
 * own `initialize` with the whole of it.
 */
import type { Implementation } from '../protocol/messages.js';
import type { Era } from '../../machines/connection.types.js';

export interface ServerHandshake {
  /** `legacy` (an `initialize` session) or `modern` (2026-07-28 `server/discover`). */
  era: Era;
  protocolVersion: string;
  serverInfo: Implementation;
  capabilities: Record<string, unknown>;
  instructions?: string | undefined;
}

/** The runtime's side: its context's current session (the machine's `SessionInfo`). */
export interface SessionSource {
  readonly context: {
    session():
      | (ServerHandshake & { serverInfo: Implementation; instructions?: string | undefined; sessionGeneration: number })
      | undefined;
  };
}

/** The current handshake, or undefined while no session serves: a copy, later sessions do not change it. */
export function serverHandshake(source: SessionSource): ServerHandshake | undefined {
  const session = source.context.session();
  if (!session) return undefined;
  const { era, protocolVersion, serverInfo, capabilities, instructions } = session;
  return { era, protocolVersion, serverInfo, capabilities, instructions };
}

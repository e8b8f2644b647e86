/**
 * The facts of one session, as its handshake (legacy) or discovery (modern) returned them:
 * stored once in the server's context (ServerContext.adopt) and read from there, never kept as
 * flags beside it.
 */
import type { SessionInfo } from '../../../machines/connection.machine.js';
import type { ModernEnvelope } from '../../protocol/era.js';

export interface SessionFacts {
  /** What the server said: era, protocol version, capabilities, server info, generation. */
  readonly session: SessionInfo;
  /** Modern era: the `_meta` envelope of every request. Undefined in the legacy era. */
  readonly envelope: ModernEnvelope | undefined;
  /** A 2025-era server runs `tools/call` as tasks (2025-11-25 `tasks.requests.tools.call`). */
  readonly runsToolTasks: boolean;
}

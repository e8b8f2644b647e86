/**
 * What the runtime derives from one session, as its handshake (legacy) or discovery (modern)
 * returned it: stored once in the server's context (ServerContext.adopt) and read from there,
 * never kept as flags beside it. The session itself is the machine's (`context.session`).
 */
import type { ModernEnvelope } from '../../protocol/era.js';

export interface SessionFacts {
  /** Modern era: the `_meta` envelope of every request. Undefined in the legacy era. */
  readonly envelope: ModernEnvelope | undefined;
  /** A 2025-era server runs `tools/call` as tasks (2025-11-25 `tasks.requests.tools.call`). */
  readonly runsToolTasks: boolean;
}

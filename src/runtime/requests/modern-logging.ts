/**
 * The modern era (2026-07-28) removed `logging/setLevel`: the client asks for log messages per
 * request with `io.modelcontextprotocol/logLevel` in `_meta`. A `logging/setLevel` request (from
 * `setLoggingLevel` or `request()`) is therefore answered here, never sent: the level is kept
 * (it outlives rediscovery and restarts, like the 2025 era's restored level) and every later
 * request carries it.
 */
import type { ModernEnvelope } from '../../protocol/era.js';
import type { PendingRequests, PendingRequest } from '../../protocol/pending.js';
import { LOGGING_LEVELS, type LoggingLevel } from '../../protocol/results.js';
import type { SessionState } from '../context/session-state.js';

const INVALID_PARAMS = -32602;

interface LoggingOwner {
  readonly pending: PendingRequests;
  readonly sessionState: SessionState;
}

export function answerSetLevel(request: PendingRequest, envelope: ModernEnvelope, owner: LoggingOwner): void {
  const level = request.params?.level;
  if (!(LOGGING_LEVELS as readonly unknown[]).includes(level)) {
    const message = `invalid log level ${JSON.stringify(level)}: must be one of ${LOGGING_LEVELS.join(', ')}`;
    owner.pending.settleResponse({ jsonrpc: '2.0', id: request.id, error: { code: INVALID_PARAMS, message } });
    return;
  }
  envelope.setLogLevel(level as string);
  owner.sessionState.levelSet(level as LoggingLevel);
  owner.pending.settleResponse({ jsonrpc: '2.0', id: request.id, result: {} });
}

// The HTTP fixture's session table: ids handed out at initialize, checked on every later request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Faults } from './faults.js';
import { header, rpcError, sendJson } from './wire.js';

/** Session id handed out when `faults.invalidSessionIdOnce` is set (space + non-ASCII byte 0xE9). */
export const INVALID_SESSION_ID = 'bad id\u00e9';

export interface SessionTable {
  /** Live session ids (tests read and clear it). */
  readonly ids: Set<string>;
  /** Validates the session header. Returns the id, undefined (sessions off), or false (already answered). */
  check(req: IncomingMessage, res: ServerResponse): string | undefined | false;
  /** A new session's id. */
  open(): string;
}

export function createSessionTable(sessionRequired: boolean, faults: Faults): SessionTable {
  const ids = new Set<string>();
  return {
    ids,
    check(req, res) {
      if (!sessionRequired) return undefined;
      const sid = header(req, 'mcp-session-id');
      if (!sid) {
        sendJson(res, 400, rpcError(null, -32000, 'Bad Request: Missing session ID'));
        return false;
      }
      if (!ids.has(sid)) {
        const delay = faults.delayNextNotFoundMs;
        faults.delayNextNotFoundMs = undefined;
        if (delay) setTimeout(() => sendJson(res, 404, rpcError(null, -32001, 'Session not found')), delay);
        else sendJson(res, 404, rpcError(null, -32001, 'Session not found'));
        return false;
      }
      return sid;
    },
    open() {
      let sid = `sess-${randomUUID()}`;
      if (faults.invalidSessionIdOnce) {
        faults.invalidSessionIdOnce = false;
        sid = INVALID_SESSION_ID;
      }
      ids.add(sid);
      return sid;
    },
  };
}

/**
 * The `Mcp-Session-Id` a server hands out: visible ASCII (0x21–0x7E), sent once, or it is refused
 * (DESIGN §5). Checked where a session begins: a handshake's answer, a stored session resumed.
 */
import { ProtocolError } from '../../core/errors.js';

const VISIBLE_ASCII = /^[\x21-\x7E]+$/;

export const isValidSessionId = (id: string): boolean => VISIBLE_ASCII.test(id);

/** The session id of a handshake's answer: none (a stateless server), or a valid one; else a ProtocolError. */
export function sessionIdOf(header: string | string[] | undefined, server: string): string | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? (header.length === 1 ? header[0] : undefined) : header;
  if (value === undefined || !isValidSessionId(value)) {
    throw new ProtocolError(
      'the server sent an invalid Mcp-Session-Id (it must be visible ASCII, 0x21-0x7E, and sent once)',
      { server },
    );
  }
  return value;
}

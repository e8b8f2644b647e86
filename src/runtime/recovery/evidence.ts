/**
 * What a failed request says about the connection. The transports report what happened (a
 * status, a body, a socket error); this reads it as evidence, and the connection machine decides
 * what to do with it:
 *
 * - `session lost`: proof the server no longer knows the session (404 on a request that carried
 *   it, or a 400 whose body says the session is missing, invalid, unknown or not found). The
 *   request was never processed: it is replayed after one re-initialize.
 * - `session in doubt`: a 400 on a request that carried the session, that does not name it. One
 *   probe decides whether the session or the request was at fault.
 * - `unreachable`: no connection could be made (refused, no route, DNS, connect timeout), or a
 *   stdio process was gone before the line was written. The request was never sent: it waits for
 *   the connection to come back.
 * - `broken`: the connection died after the request was sent, before its answer. The outcome is
 *   unknown: the request is replayed only when repeating it is safe (replay-policy.ts).
 * - `request`: about this request only (any other failure): it fails, the connection goes on.
 */
import type { ProbeVerdict } from '../../../machines/connection.machine.js';
import {
  ConnectionClosedError,
  describeError,
  RequestTimeoutError,
  SessionExpiredError,
  StreamEndedError,
  TransportError,
} from '../../core/errors.js';

export type Evidence =
  | { kind: 'session lost'; generation: number; evidence: string }
  | { kind: 'session in doubt'; generation: number; evidence: string }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'broken'; reason: string; sessionRefused: boolean }
  | { kind: 'request' };

/** A 400 body that says the session is the problem (as the SDK's examples word it, or the spec's). */
const NAMES_THE_SESSION = /session/i;
const SAYS_IT_IS_GONE = /missing|invalid|unknown|not found|no valid|expired|terminated|does not exist/i;

/** Socket errors that mean no connection was made: the request never left. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** Socket errors after a connection was made: the request may have reached the server. */
const BROKEN_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ETIMEDOUT']);

/** The error codes along an error's cause chain (undici wraps the socket's error). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

export function readEvidence(error: unknown): Evidence {
  if (error instanceof SessionExpiredError) {
    return { kind: 'session lost', generation: error.sessionGeneration, evidence: error.evidence };
  }
  if (error instanceof StreamEndedError) {
    const refused = error.refusedStatus === 400 || error.refusedStatus === 404;
    return { kind: 'broken', reason: 'the response stream ended', sessionRefused: refused };
  }
  if (error instanceof TransportError && error.status === 400 && error.sessionGeneration !== undefined) {
    const body = error.body ?? '';
    if (NAMES_THE_SESSION.test(body) && SAYS_IT_IS_GONE.test(body)) {
      return { kind: 'session lost', generation: error.sessionGeneration, evidence: 'HTTP 400 naming the session' };
    }
    return { kind: 'session in doubt', generation: error.sessionGeneration, evidence: 'HTTP 400' };
  }
  if (error instanceof TransportError && error.status !== undefined) return { kind: 'request' };
  // A stdio process that was gone before the line was written: the request never left.
  if (error instanceof ConnectionClosedError && error.unsent) return { kind: 'unreachable', reason: 'not running' };
  const codes = codesOf(error);
  const unreachable = codes.find((code) => UNREACHABLE_CODES.has(code));
  if (unreachable) return { kind: 'unreachable', reason: unreachable };
  const broken = codes.find((code) => BROKEN_CODES.has(code));
  if (broken) return { kind: 'broken', reason: `the connection broke (${broken})`, sessionRefused: false };
  return { kind: 'request' };
}

/** What a failed probe of the session says (any JSON-RPC answer, an error included, proves it alive). */
export function probeVerdict(error: unknown): ProbeVerdict {
  if ((error as { code?: unknown } | null)?.code === 'AUTHORIZATION_REQUIRED') {
    return { verdict: 'unauthorized', error: describeError(error) };
  }
  const evidence = readEvidence(error);
  if (evidence.kind === 'session lost') return { verdict: 'session lost', evidence: evidence.evidence };
  // A ping cannot be a bad request: a 400 to it on the session means the session is refused.
  if (evidence.kind === 'session in doubt') return { verdict: 'session lost', evidence: 'HTTP 400 to a ping' };
  if (error instanceof RequestTimeoutError) return { verdict: 'unreachable', error: 'the probe got no answer in time' };
  return { verdict: 'unreachable', error: describeError(error) };
}
